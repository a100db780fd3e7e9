package web

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// params reads a request's query parameters, named after the CLI's flags
// (--include-deleted is include_deleted). The first bad one is kept in
// err, so that a handler reads them all and checks once.
type params struct {
	v   url.Values
	err error
}

func (p *params) fail(format string, args ...any) {
	if p.err == nil {
		p.err = invalidf(format, args...)
	}
}

// only fails on a parameter outside known: a misspelled filter would
// otherwise be ignored, and the answer look right while it is not.
func (p *params) only(known ...string) {
	for k := range p.v {
		if !slices.Contains(known, k) {
			slices.Sort(known)
			p.fail("unknown parameter %q (this endpoint takes %s)", k, strings.Join(known, ", "))
			return
		}
	}
}

func (p *params) str(name string) string { return strings.TrimSpace(p.v.Get(name)) }

// flag reads a boolean: present without a value, 1 or true is true.
func (p *params) flag(name string) bool {
	vs, ok := p.v[name]
	if !ok {
		return false
	}
	switch strings.ToLower(vs[0]) {
	case "", "1", "true", "yes", "on":
		return true
	case "0", "false", "no", "off":
		return false
	}
	p.fail("%s must be true or false, not %q", name, vs[0])
	return false
}

// int reads a whole number, def when absent.
func (p *params) int(name string, def int) int {
	s := p.str(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		p.fail("%s must be a whole number, not %q", name, s)
	}
	return n
}

// limit reads a page size: def when absent, at most max.
func (p *params) limit(def, max int) int {
	n := p.int("limit", def)
	if n < 1 || n > max {
		p.fail("limit must be between 1 and %d", max)
	}
	return n
}

// scope reads the scope parameters every episodes read needs.
func (p *params) scope() Scope {
	return Scope{Scope: p.str("scope"), Global: p.flag("global")}
}
