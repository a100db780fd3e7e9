package view

import (
	"bytes"
	"errors"

	"github.com/clawledger/clawledger"
)

// Host is what one host (a machine running OpenClaw) contributed to a
// ledger: in a ledger of many hosts, each writes its own sources.
type Host struct {
	Host      string  `json:"host"`
	StateDirs int64   `json:"state_dirs"`
	Sources   int64   `json:"sources"`
	Lines     int64   `json:"lines"`
	Sessions  int64   `json:"sessions"`
	LastScan  *string `json:"last_scan"` // when its last ingest finished
	LagMs     int64   `json:"lag_ms"`    // how long ago that was, by the ledger's clock
}

// NewHosts renders the hosts of a ledger.
func NewHosts(hosts []clawledger.HostStatus) []Host {
	out := make([]Host, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, Host{Host: h.Name, StateDirs: h.StateDirs, Sources: h.Sources, Lines: h.Lines, Sessions: h.Sessions,
			LastScan: Time(h.LastScan), LagMs: h.LagMs})
	}
	return out
}

// ByHost is a report asked of each host of a ledger (--by host): each
// host's answer is the one its own ledger gives.
type ByHost[T any] struct {
	Hosts []HostReport[T] `json:"hosts"`
}

// HostReport is one host's answer: the report's own fields, with the
// host's name first.
type HostReport[T any] struct {
	Host   string
	Report T
}

// MarshalJSON encodes the report's object with "host" added first.
func (h HostReport[T]) MarshalJSON() ([]byte, error) {
	name, err := marshal(h.Host)
	if err != nil {
		return nil, err
	}
	body, err := marshal(h.Report)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, errors.New("view: a report by host must be a JSON object")
	}
	out := append([]byte(`{"host":`), name...)
	if !bytes.Equal(body, []byte("{}")) {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}
