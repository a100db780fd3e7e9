package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/search"
)

// Text output shows data taken from a state dir or a ledger (message text,
// tool output, ids, paths, error messages) and none of it may act on the
// terminal: every value printed passes here. The printers (app.printf,
// app.warnf, fprintf) and the table writer render each argument with
// safe: a string on one line (sanitize.Line), a body keeping its lines
// (sanitize.Text). Format strings are the program's own. --json needs none
// of this: the encoder escapes every control character.

// body is message text or tool output: printed with its lines kept.
type body string

// trusted is text the CLI composed from sanitized parts and its own
// escapes (a search hit's highlights): printed as it is.
type trusted string

// safe renders one value for a terminal.
func safe(v any) any {
	switch x := v.(type) {
	case string:
		return sanitize.Line(x)
	case body:
		return sanitize.Text(string(x))
	case trusted:
		return string(x)
	case []string:
		out := make([]string, len(x))
		for i, s := range x {
			out[i] = sanitize.Line(s)
		}
		return out
	case []byte:
		return sanitize.Line(string(x))
	case error:
		return sanitize.Line(x.Error())
	case fmt.Stringer:
		return sanitize.Line(x.String())
	}
	return v
}

func safeArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = safe(a)
	}
	return out
}

// fprintf is fmt.Fprintf with every argument rendered safe.
func fprintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, format, safeArgs(args)...)
}

// highlight renders a search snippet on one line with its matches between
// open and close (the CLI's own escapes on a colour terminal): the text
// around the marks is sanitized, the marks become open and close.
func highlight(snippet, open, close string) trusted {
	var b strings.Builder
	for {
		i := strings.IndexAny(snippet, search.MarkStart+search.MarkEnd)
		if i < 0 {
			b.WriteString(sanitize.Line(snippet))
			return trusted(b.String())
		}
		b.WriteString(sanitize.Line(snippet[:i]))
		if snippet[i:i+len(search.MarkStart)] == search.MarkStart {
			b.WriteString(open)
		} else {
			b.WriteString(close)
		}
		snippet = snippet[i+1:]
	}
}
