package main

import (
	"errors"
	"time"

	"github.com/clawledger/clawledger/ledger"
)

// parseRange reads --since and --until in loc (see ledger.ParseRange).
// Every command with --since and --until reads them this way.
func parseRange(since, until string, now time.Time, loc *time.Location) (from, to int64, err error) {
	from, to, err = ledger.ParseRange(since, until, now, loc)
	if errors.Is(err, ledger.ErrEmptyRange) {
		return 0, 0, usagef("--until %s is not after --since %s", until, since)
	}
	return from, to, err
}

const noRefreshHelp = "answer from the ledger as it is, without ingesting new data first"

// refreshFlag is a query command's --no-refresh.
type refreshFlag struct{ off bool }

// queryBacklog is the most ledger lines a query's refresh indexes (a
// variable for the tests).
var queryBacklog int64 = ledger.DefaultIndexBacklog

// policy is the query's refresh: the query path's, unless --no-refresh.
func (f refreshFlag) policy() ledger.Refresh {
	if f.off {
		return ledger.Refresh{}
	}
	r := ledger.QueryRefresh()
	r.IndexBacklog = queryBacklog
	return r
}
