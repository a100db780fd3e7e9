package cortex

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/clawledger/clawledger"
)

// Topic keywords are TF-IDF over episode text. The term frequencies are
// stored with each episode (its TopTerms most frequent content words); the
// document frequencies come from every episode stored, when asked, so an
// episode's keywords never depend on the order the cortex saw the ledger in.

const (
	// TopTerms is how many terms an episode keeps.
	TopTerms = 16
	// maxTermsHeld bounds the distinct words an open episode counts; past
	// it the words seen once are dropped.
	maxTermsHeld = 4096
	minTermLen   = 3
	maxTermLen   = 40
)

// stopwords are words too common in conversations with an agent to say
// what an episode is about.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can cannot could did didn't do does doesn't doing don't down during each else even ever
every few for from further get gets getting got had has have having he her here hers herself him himself his
how however i if in into is isn't it it's its itself just let let's like ll made make makes many may me might
more most much must my myself need needs no nor not now of off on once one only or other our ours ourselves
out over own per please really same say says see seems shall she should so some such sure than thank thanks
that that's the their theirs them themselves then there these they this those though through to too under
until up upon us use used using very via want was wasn't way we well were weren't what when where which while
who whom why will with within without won't would yes yet you your yours yourself yourselves
okay ok hello hi hey done let's now new next first last also still already again right thing things something
anything everything nothing lot lots bit good great fine sure yeah yep nope maybe probably actually basically
going gonna want wants wanted know think looks look looking help tell give take put keep try trying tried
able time times day today tomorrow yesterday work working worked run running ran check checked checking
file files`) {
		m[w] = true
	}
	return m
}()

// stopwordShapes has bit n of stopwordShapes[c] set when a stopword of n
// bytes starts with byte c: most words are told apart from every stopword
// by that alone, without a lookup.
var stopwordShapes = func() (m [256]uint64) {
	for w := range stopwords {
		m[w[0]] |= 1 << min(len(w), 63)
	}
	return m
}()

// stopword reports whether a word (lower case) is a stopword.
func stopword(w []byte) bool {
	return len(w) > 0 && stopwordShapes[w[0]]&(1<<min(len(w), 63)) != 0 && stopwords[string(w)]
}

// isCJK reports whether r belongs to a script written without spaces.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// asciiWord marks the ASCII bytes of words: 'A' for upper-case letters,
// 'a' for the rest (lower-case letters, digits and the apostrophe); every
// other byte is 0.
var asciiWord = func() (t [256]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case 'A' <= c && c <= 'Z':
			t[c] = 'A'
		case 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '\'':
			t[c] = 'a'
		}
	}
	return t
}()

// terms calls fn with the content words of s, lower case: words of
// letters (digits allowed after the first letter), not stopwords, 3 to 40
// bytes; CJK runs as overlapping bigrams. The word handed to fn is valid
// during the call only.
func terms(s string, fn func([]byte)) {
	var word []byte
	var cjk []rune
	var bigram []byte
	letterFirst := false
	flushWord := func() {
		if len(word) >= minTermLen && len(word) <= maxTermLen && letterFirst && !stopword(word) {
			fn(word)
		}
		word = word[:0]
	}
	flushCJK := func() {
		for i := 0; i+1 < len(cjk); i++ {
			bigram = utf8.AppendRune(utf8.AppendRune(bigram[:0], cjk[i]), cjk[i+1])
			fn(bigram)
		}
		cjk = cjk[:0]
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII: most of what agents write
			if asciiWord[c] == 0 || c == '\'' && len(word) == 0 { // an apostrophe opens no word
				i++
				flushWord()
				flushCJK()
				continue
			}
			// a run of letters, digits and apostrophes, taken whole
			if len(cjk) > 0 {
				flushCJK()
			}
			if len(word) == 0 {
				letterFirst = c > '9'
			}
			j, upper := i, false
			for ; j < len(s) && asciiWord[s[j]] != 0; j++ {
				upper = upper || asciiWord[s[j]] == 'A'
			}
			n := len(word)
			word = append(word, s[i:j]...)
			if upper {
				for k := n; k < len(word); k++ {
					if c := word[k]; 'A' <= c && c <= 'Z' {
						word[k] = c + 'a' - 'A'
					}
				}
			}
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r >= 0x1100 && isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushCJK()
			if len(word) == 0 {
				letterFirst = unicode.IsLetter(r)
			}
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
}

// termCounter counts an episode's words, in order of first appearance:
// the order is part of the stored state, and it is the same however the
// episode's entries were split between updates, so the state needs no sort.
type termCounter struct {
	index map[string]int32 // word -> its position in words
	words []clawledger.TermCount
}

func newTermCounter() *termCounter { return termCounters.Get().(*termCounter) }

// termCounters are counters to reuse: an episode's counter grows to
// thousands of words, and most transcripts hold an episode or two.
var termCounters = sync.Pool{New: func() any { return &termCounter{index: map[string]int32{}} }}

// release empties the counter and hands it back for reuse.
func (tc *termCounter) release() {
	if tc == nil {
		return
	}
	clear(tc.index)
	clear(tc.words)
	tc.words = tc.words[:0]
	termCounters.Put(tc)
}

// count returns how often a word was counted.
func (tc *termCounter) count(w string) int64 {
	if i, ok := tc.index[w]; ok {
		return tc.words[i].Count
	}
	return 0
}

func (tc *termCounter) add(s string) {
	terms(s, func(w []byte) {
		w = bytes.TrimSuffix(bytes.TrimSuffix(w, []byte("'s")), []byte("'"))
		if len(w) < minTermLen {
			return
		}
		if i, ok := tc.index[string(w)]; ok {
			tc.words[i].Count++
		} else if !stopword(w) {
			tc.put(string(w), 1)
		}
	})
	if len(tc.words) > maxTermsHeld {
		tc.prune()
	}
}

func (tc *termCounter) put(w string, n int64) {
	tc.index[w] = int32(len(tc.words))
	tc.words = append(tc.words, clawledger.TermCount{Term: w, Count: n})
}

// prune drops the words seen once.
func (tc *termCounter) prune() {
	kept := tc.words[:0]
	for _, t := range tc.words {
		if t.Count > 1 {
			kept = append(kept, t)
		} else {
			delete(tc.index, t.Term)
		}
	}
	clear(tc.words[len(kept):])
	tc.words = kept
	for i, t := range kept {
		tc.index[t.Term] = int32(i)
	}
}

// appendTo appends the counts as "term count" lines: the state of a long
// episode holds thousands.
func (tc *termCounter) appendTo(b []byte) []byte {
	if tc == nil {
		return b
	}
	b = slices.Grow(b, tc.encodedLen())
	for _, t := range tc.words {
		b = append(b, t.Term...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.Count, 10)
		b = append(b, '\n')
	}
	return b
}

// encodedLen is how many bytes appendTo appends.
func (tc *termCounter) encodedLen() int {
	if tc == nil {
		return 0
	}
	n := 0
	for _, t := range tc.words {
		n += len(t.Term) + 3 // a space, a digit, a newline
		for c := t.Count; c >= 10 || c <= -10; c /= 10 {
			n++
		}
		if t.Count < 0 {
			n++
		}
	}
	return n
}

// decodeTerms reads what appendTo wrote.
func decodeTerms(s string) *termCounter {
	tc := newTermCounter()
	for line := range strings.SplitSeq(s, "\n") {
		if w, n, ok := strings.Cut(line, " "); ok {
			if c, err := strconv.ParseInt(n, 10, 64); err == nil {
				tc.put(w, c)
			}
		}
	}
	return tc
}

// top returns the n most frequent terms (ties in term order).
func (tc *termCounter) top(n int) []clawledger.TermCount {
	// the n best so far, best first: most words are seen too rarely to
	// enter, so this costs a comparison per word, not a sort
	out := make([]clawledger.TermCount, 0, max(n, 0))
	for _, t := range tc.words {
		if n <= 0 {
			break
		}
		if len(out) == n && (t.Count < out[n-1].Count || termOrder(t, out[n-1]) >= 0) {
			continue
		}
		i, _ := slices.BinarySearchFunc(out, t, termOrder)
		if len(out) < n {
			out = append(out, clawledger.TermCount{})
		}
		copy(out[i+1:], out[i:len(out)-1])
		out[i] = t
	}
	return out
}

// termOrder orders terms by count, most frequent first, then by term.
func termOrder(a, b clawledger.TermCount) int {
	return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Term, b.Term))
}

// Keyword is a topic keyword of an episode.
type Keyword struct {
	Term       string  `json:"term"`
	Score      float64 `json:"score"`      // (1 + ln tf) * ln((1 + N) / (1 + df))
	Confidence float64 `json:"confidence"` // score relative to the episode's best, in (0, 1]
}

// Keywords weighs an episode's terms against the corpus (episodes N, a
// term's document frequency df) and returns the k best with a score above
// zero: a term every episode has says nothing about this one.
func Keywords(terms []clawledger.TermCount, episodes int64, df map[string]int64, k int) []Keyword {
	var out []Keyword
	for _, t := range terms {
		if t.Count <= 0 {
			continue
		}
		idf := math.Log(float64(1+episodes) / float64(1+df[t.Term]))
		if s := (1 + math.Log(float64(t.Count))) * idf; s > 1e-9 {
			out = append(out, Keyword{Term: t.Term, Score: round3(s)})
		}
	}
	slices.SortFunc(out, func(a, b Keyword) int { return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Term, b.Term)) })
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		out[i].Confidence = round3(out[i].Score / out[0].Score)
	}
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
