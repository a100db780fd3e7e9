package jsondepth

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func nested(n int) string { return strings.Repeat(`{"a":[`, n) + "1" + strings.Repeat("]}", n) }

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		doc  string
		max  int
		deep bool
	}{
		{"flat", `{"a":1,"b":[1,2]}`, 2, false},
		{"at the bound", `[[[1]]]`, 3, false},
		{"over the bound", `[[[[1]]]]`, 3, true},
		{"siblings do not add up", `[[1],[2],[3],{"a":1}]`, 2, false},
		{"brackets in a string", `{"a":"[[[[[[{{{{"}`, 1, false},
		{"escaped quote in a string", `{"a":"\"[[[[["}`, 1, false},
		{"escaped backslash ends the string", `{"a":"\\",b:[[[[1]]]]}`, 3, true},
		{"JSON5 single quotes", `{a:'[[[["[[[['}`, 1, false},
		{"JSON5 line comment", "{a:1 // [[[[[[\n}", 1, false},
		{"JSON5 block comment", "{/* [[[[ * / [[ */a:1}", 1, false},
		{"a slash that is not a comment", `[/[[1]]]`, 2, true},
		{"unbalanced closers never go negative", `]]]]]][[[1]]]`, 2, true},
		{"a million levels", nested(1_000_000), 300, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Check([]byte(c.doc), c.max)
			var de *Error
			if got := errors.As(err, &de); got != c.deep {
				t.Fatalf("Check = %v, want too deep: %v", err, c.deep)
			}
			// fed one byte at a time, the answer is the same
			s := Scanner{Max: c.max}
			var serr error
			for i := range len(c.doc) {
				if serr = s.Scan([]byte{c.doc[i]}); serr != nil {
					break
				}
			}
			if (serr != nil) != c.deep {
				t.Fatalf("byte by byte: %v, want too deep: %v", serr, c.deep)
			}
		})
	}
}

func TestReader(t *testing.T) {
	doc := nested(1000)
	_, err := io.ReadAll(Reader(iotest.HalfReader(strings.NewReader(doc)), 300))
	var de *Error
	if !errors.As(err, &de) || de.Max != 300 {
		t.Fatalf("read a 1000-deep document through a 300 bound: %v", err)
	}
	got, err := io.ReadAll(Reader(iotest.OneByteReader(strings.NewReader(doc)), 2000))
	if err != nil || !bytes.Equal(got, []byte(doc)) {
		t.Fatalf("within the bound: %v, %d bytes", err, len(got))
	}
}

func BenchmarkCheck(b *testing.B) {
	doc := []byte(strings.Repeat(`{"sessionId":"abc","model":"gpt","skillsSnapshot":{"a":[1,2,3],"prompt":"x [y] {z}"}},`, 10000))
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		_ = Check(doc, 300)
	}
}
