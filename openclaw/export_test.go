package openclaw

import "github.com/clawledger/clawledger"

type clawledgerEntry = clawledger.Entry

type indexEntry = clawledger.IndexEntry
