package view

import "github.com/clawledger/clawledger/transfer"

// Migrate is the answer of migrate: what a copy of one ledger into
// another did.
type Migrate struct {
	From string `json:"from"`
	To   string `json:"to"`
	Host string `json:"host,omitempty"` // the host the copy is of and for, in a ledger of many hosts
	*transfer.Report
}
