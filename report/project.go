// Package report holds the pure logic behind the reading commands: fuzzy
// project matching, usage periods in a time zone, usage rows and totals.
package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ProjectScanMessages is how many of a session's first user messages the
// message fallback of project matching reads.
const ProjectScanMessages = 5

// Project is a project name prepared for fuzzy matching: case and the
// separators - _ . and space are ignored.
type Project struct {
	Name  string
	norm  string   // the whole name normalized
	parts []string // for names with a slash: each component normalized
	words int      // how many words the name spans in prose
	dense bool     // written in a script without spaces between words (CJK, Thai)
}

// ProjectMatch says why a session matched a project.
type ProjectMatch struct {
	By        string // "cwd" or "message"
	Cwd       string // by cwd: the session's cwd
	Component string // by cwd: the path component(s) that matched
	Message   int    // by message: which user message (1 = the first)
	Excerpt   string // by message: the text around the mention
}

// NewProject prepares name; ok is false when nothing is left to match.
func NewProject(name string) (Project, bool) {
	p := Project{Name: name, norm: normalize(name), words: len(splitWords(name))}
	for _, r := range p.norm {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai) {
			p.dense = true
		}
	}
	if strings.ContainsAny(name, `/\`) {
		for _, c := range splitPath(name) {
			if n := normalize(c); n != "" {
				p.parts = append(p.parts, n)
			}
		}
	}
	return p, p.norm != ""
}

// normalize lowercases s and drops separators and punctuation, keeping
// letters and digits of any script.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
}

// ProjectCwd reports whether cwd can tell a session's project: not empty,
// and not inside an OpenClaw state dir (the agent's own workspace, which
// every gateway session shares).
func ProjectCwd(cwd string) bool {
	if strings.TrimSpace(cwd) == "" {
		return false
	}
	for _, c := range splitPath(cwd) {
		switch {
		case c == ".openclaw", strings.HasPrefix(c, ".openclaw-"), c == ".clawdbot", c == ".moltbot", c == ".moldbot":
			return false
		}
	}
	return true
}

// MatchCwd reports whether a path component of cwd contains the name (a
// name with slashes: consecutive components containing each of its parts).
func (p Project) MatchCwd(cwd string) (ProjectMatch, bool) {
	comps := splitPath(cwd)
	norms := make([]string, len(comps))
	for i, c := range comps {
		norms[i] = normalize(c)
	}
	if len(p.parts) > 1 {
	outer:
		for i := 0; i+len(p.parts) <= len(norms); i++ {
			for j, part := range p.parts {
				if !strings.Contains(norms[i+j], part) {
					continue outer
				}
			}
			return ProjectMatch{By: "cwd", Cwd: cwd, Component: strings.Join(comps[i:i+len(p.parts)], "/")}, true
		}
		return ProjectMatch{}, false
	}
	// the deepest component wins: /src/eastore/eastore-web names eastore-web
	for i := len(norms) - 1; i >= 0; i-- {
		if strings.Contains(norms[i], p.norm) {
			return ProjectMatch{By: "cwd", Cwd: cwd, Component: comps[i]}, true
		}
	}
	return ProjectMatch{}, false
}

// MatchText reports whether text mentions the name: a word (or, for a name
// of several words, a run of as many words) that starts with it once case
// and separators are ignored. "eastore" is mentioned by "Eastore-Web" and
// "eastore's", not by "beastoreroom". In scripts written without spaces
// (CJK, Thai) the name may stand anywhere in a word.
func (p Project) MatchText(text string) (excerpt string, ok bool) {
	words := splitWords(text)
	span := max(p.words, 1)
	for i := range words {
		var joined strings.Builder
		for j := i; j < len(words) && j < i+span; j++ {
			joined.WriteString(normalize(text[words[j][0]:words[j][1]]))
		}
		w := joined.String()
		if strings.HasPrefix(w, p.norm) || (p.dense && strings.Contains(w, p.norm)) {
			return excerptAround(text, words[i][0], 120), true
		}
	}
	return "", false
}

// splitWords returns the byte ranges of the words of s: runs of letters,
// digits and the in-word separators - and _.
func splitWords(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		in := unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

// excerptAround returns about n bytes of s around byte at, on one line.
func excerptAround(s string, at, n int) string {
	from := max(at-n/3, 0)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	to := min(from+n, len(s))
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	out := strings.Join(strings.Fields(s[from:to]), " ")
	if from > 0 {
		out = "…" + out
	}
	if to < len(s) {
		out += "…"
	}
	return out
}
