package postgres

import (
	"encoding/binary"
	"errors"
	"slices"
)

// A range's postings are built from its chunks' stored words
// (tsvectorsend's format: the count, then each word NUL-terminated with
// its number of positions and the positions, a weight in their top two
// bits), newest chunk first, into one row per word: the same words, counts
// and positions the word index matches and the counter counts
// (search_counts.go), so that both give the same answers.

// tfCapped marks, in a posting's count, that its last position is the
// tsvector's last (maxPosition): positions past it were folded into it.
const tfCapped = 0x8000

// postingList is one word's postings in a range, encoded as its row.
type postingList struct {
	n                   int
	ids, tfs, lens, pos []byte
	wide                bool // lens are 4 bytes each (a length past 65535)
}

// rangeBuilder gathers a range's postings, chunk by chunk, newest first.
type rangeBuilder struct {
	base  int64 // the range's first id
	words map[string]*postingList
}

func newRangeBuilder(base int64) *rangeBuilder {
	return &rangeBuilder{base: base, words: map[string]*postingList{}}
}

var errBadWords = errors.New("malformed stored words")

// add adds a chunk's postings from its stored words; chunks come newest
// first.
func (b *rangeBuilder) add(id int64, tokens int32, words []byte) error {
	if len(words) < 4 {
		return errBadWords
	}
	n := binary.BigEndian.Uint32(words)
	words = words[4:]
	off := uint16(id - b.base)
	for range n {
		end := slices.Index(words, 0)
		if end < 0 || len(words) < end+3 {
			return errBadWords
		}
		np := int(binary.BigEndian.Uint16(words[end+1:]))
		ps := words[end+3:]
		if len(ps) < 2*np {
			return errBadWords
		}
		l := b.words[string(words[:end])]
		if l == nil {
			l = &postingList{}
			b.words[string(words[:end])] = l
		}
		l.n++
		l.ids = binary.LittleEndian.AppendUint16(l.ids, off)
		tf := uint16(np)
		for j := range np {
			p := binary.BigEndian.Uint16(ps[2*j:]) & 0x3fff
			l.pos = binary.LittleEndian.AppendUint16(l.pos, p)
			if j == np-1 && p >= maxPosition {
				tf |= tfCapped
			}
		}
		l.tfs = binary.LittleEndian.AppendUint16(l.tfs, tf)
		l.lens = binary.LittleEndian.AppendUint32(l.lens, uint32(tokens))
		l.wide = l.wide || tokens > 0xffff
		words = ps[2*np:]
	}
	return nil
}

// encodedLens is a list's lengths as stored: a width byte, then each
// length in 2 bytes, or 4 when one needs them.
func (l *postingList) encodedLens() []byte {
	if l.wide {
		return append([]byte{4}, l.lens...)
	}
	out := make([]byte, 1, 1+2*l.n)
	out[0] = 2
	for i := range l.n {
		out = binary.LittleEndian.AppendUint16(out, uint16(binary.LittleEndian.Uint32(l.lens[4*i:])))
	}
	return out
}

// postingView reads one word's postings in a range as fetched.
type postingView struct {
	base                int64
	n                   int
	ids, tfs, lens, pos []byte
	lenWidth            int
	at                  []int32 // each posting's first position's index in pos, when positions were fetched
}

// newPostingView checks a fetched row's columns and returns its view; pos
// may be nil (not fetched).
func newPostingView(base int64, n int, ids, tfs, lens, pos []byte) (*postingView, error) {
	v := &postingView{base: base, n: n, ids: ids, tfs: tfs, lens: lens, pos: pos}
	if n < 0 || len(ids) != 2*n || len(tfs) != 2*n || len(lens) < 1 {
		return nil, errBadPostings
	}
	v.lenWidth, v.lens = int(lens[0]), lens[1:]
	if (v.lenWidth != 2 && v.lenWidth != 4) || len(v.lens) != v.lenWidth*n {
		return nil, errBadPostings
	}
	if pos != nil {
		v.at = make([]int32, n+1)
		for i := range n {
			v.at[i+1] = v.at[i] + int32(v.np(i))
		}
		if int(v.at[n])*2 != len(pos) {
			return nil, errBadPostings
		}
	}
	return v, nil
}

var errBadPostings = errors.New("malformed postings")

// id is posting i's chunk id.
func (v *postingView) id(i int) int64 { return v.base + int64(binary.LittleEndian.Uint16(v.ids[2*i:])) }

// np is posting i's number of positions; capped reports that its count
// may fall short of the chunk's (the tsvector's limits: 256 positions, the
// last position 16383).
func (v *postingView) np(i int) int { return int(binary.LittleEndian.Uint16(v.tfs[2*i:]) &^ tfCapped) }

func (v *postingView) capped(i int) bool {
	tf := binary.LittleEndian.Uint16(v.tfs[2*i:])
	return tf&tfCapped != 0 || int(tf&^tfCapped) >= maxPositions
}

// length is posting i's chunk length in tokens.
func (v *postingView) length(i int) int {
	if v.lenWidth == 4 {
		return int(binary.LittleEndian.Uint32(v.lens[4*i:]))
	}
	return int(binary.LittleEndian.Uint16(v.lens[2*i:]))
}

// position is posting i's jth position.
func (v *postingView) position(i, j int) uint16 {
	return binary.LittleEndian.Uint16(v.pos[2*(int(v.at[i])+j):])
}
