package main

// The ledger backends this binary links: each registers the URL schemes
// of its locations (see clawledger.RegisterBackend). This is the one file
// of the command that names a backend.
import (
	_ "github.com/clawledger/clawledger/postgres"
	_ "github.com/clawledger/clawledger/sqlite"
)
