// Package jsondepth bounds how deeply a JSON or JSON5 document nests, with a
// scan of its bytes that never recurses: the recursive decoders behind it
// (a JSON5 parser, encoding/json's encoder, fastjson's validator) would
// otherwise follow a hostile document of a million nested brackets until
// the goroutine's stack overflows, a fatal error no recover catches.
package jsondepth

import (
	"fmt"
	"io"
)

// Error reports a document nested deeper than the bound.
type Error struct{ Max int }

func (e *Error) Error() string { return fmt.Sprintf("JSON nested deeper than %d levels", e.Max) }

// Scanner tracks the nesting of a JSON or JSON5 document fed to it in
// pieces. Brackets inside strings ("..." and JSON5's '...', escapes
// included) and JSON5 comments do not count. It checks nesting only: a
// document it accepts may still be invalid.
type Scanner struct {
	Max   int
	depth int
	state state
	quote byte
}

type state uint8

const (
	normal       state = iota
	inString           // after a quote
	escaped            // after a backslash in a string
	slash              // after a '/' outside a string
	lineComment        // after "//"
	blockComment       // after "/*"
	blockStar          // after a '*' in a block comment
)

// Scan reads the next piece of the document; it returns an *Error once the
// document nests deeper than s.Max, and every call after that too.
func (s *Scanner) Scan(p []byte) error {
	if s.depth > s.Max {
		return &Error{Max: s.Max}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case normal:
		case inString:
			// skip to the next quote or backslash
			for ; i < len(p) && p[i] != s.quote && p[i] != '\\'; i++ {
			}
			if i == len(p) {
				return nil
			}
			if p[i] == '\\' {
				s.state = escaped
			} else {
				s.state = normal
			}
			continue
		case escaped:
			s.state = inString
			continue
		case slash:
			switch c {
			case '/':
				s.state = lineComment
				continue
			case '*':
				s.state = blockComment
				continue
			}
			s.state = normal // not a comment: look at c as usual
		case lineComment:
			if c == '\n' || c == '\r' {
				s.state = normal
			}
			continue
		case blockComment, blockStar:
			switch {
			case c == '*':
				s.state = blockStar
			case c == '/' && s.state == blockStar:
				s.state = normal
			default:
				s.state = blockComment
			}
			continue
		}
		switch c {
		case '"', '\'':
			s.state, s.quote = inString, c
		case '/':
			s.state = slash
		case '{', '[':
			if s.depth++; s.depth > s.Max {
				return &Error{Max: s.Max}
			}
		case '}', ']':
			if s.depth > 0 {
				s.depth--
			}
		}
	}
	return nil
}

// Check returns an *Error when data nests deeper than max.
func Check(data []byte, max int) error {
	s := Scanner{Max: max}
	return s.Scan(data)
}

// Reader passes r's bytes through a Scanner: a read fails with an *Error
// once the document nests deeper than max, before a decoder reading from it
// sees the bytes that went too deep.
func Reader(r io.Reader, max int) io.Reader {
	return &reader{r: r, s: Scanner{Max: max}}
}

type reader struct {
	r io.Reader
	s Scanner
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if serr := r.s.Scan(p[:n]); serr != nil {
		return 0, serr
	}
	return n, err
}
