package cortex

import (
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

func TestNormalizePath(t *testing.T) {
	for _, c := range []struct{ path, cwd, want string }{
		{"src/a.go", "/home/u/proj", "/home/u/proj/src/a.go"},
		{"./src/a.go", "/home/u/proj", "/home/u/proj/src/a.go"},
		{"src/../src/./a.go", "/home/u/proj/", "/home/u/proj/src/a.go"},
		{"/etc/hosts", "/home/u/proj", "/etc/hosts"},
		{"~/notes/todo.md", "/home/u/proj", "/home/u/notes/todo.md"},
		{"~/notes/todo.md", "/Users/ann/dev/x", "/Users/ann/notes/todo.md"},
		{"~/notes/todo.md", "/srv/app", "~/notes/todo.md"},
		{"~", "/root/x", "/root"},
		{"src/a.go", "", "src/a.go"},
		{"../b.txt", "relative/dir", "../b.txt"},
		{`"quoted.md"`, "/w", "/w/quoted.md"},
		{"file:///tmp/a%20b.txt", "/w", "/tmp/a b.txt"},
		{`C:\Users\ann\report.md`, "/w", "C:/Users/ann/report.md"},
		{`c:\x\..\y.md`, "", "C:/y.md"},
		{"", "/w", ""},
		{"two\nlines", "/w", ""},
		{"keys/sk-ant-api03-abcdefghijklmnopqrstuv.txt", "/w", "/w/keys/[REDACTED:anthropic_key].txt"},
	} {
		if got := NormalizePath(c.path, c.cwd); got != c.want {
			t.Errorf("NormalizePath(%q, %q) = %q, want %q", c.path, c.cwd, got, c.want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://example.com", "https://example.com/"},
		{"HTTPS://Docs.Example.COM:443/Guide/Install#setup", "https://docs.example.com/Guide/Install"},
		{"http://example.com:80/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com:8080/a/", "http://example.com:8080/a/"},
		{"https://example.com/a/?utm_source=x&b=2&a=1&fbclid=zz", "https://example.com/a/?a=1&b=2"},
		{"https://user:hunter2@example.com/x", "https://example.com/x"},
		{"https://api.example.com/v1?token=abc123&q=go", "https://api.example.com/v1?q=go&token=REDACTED"},
		{"https://s3.example.com/o?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA", "https://s3.example.com/o?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED"},
		{"https://example.com/path/sk-ant-api03-abcdefghijklmnopqrstuv", "https://example.com/path/[REDACTED:anthropic_key]"},
		{"ftp://example.com/file", ""},
		{"not a url", ""},
		{"/just/a/path", ""},
		{"https://[::1]:443/x", "https://[::1]:443/x"},
	} {
		if got := NormalizeURL(c.in); got != c.want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=1#c", "HTTP://X:80", "https://u:p@h/p/../q?token=1&utm_x=2", "http://[::1]:80/", "https://h/%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeURL(s)
		if n != "" && NormalizeURL(n) != n {
			t.Errorf("not idempotent: %q -> %q -> %q", s, n, NormalizeURL(n))
		}
	})
}

func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"src/a.go", "~/x", `C:\a\b`, "file:///tmp/x", "../../..", "a//b/./c/"} {
		f.Add(s, "/home/u/proj")
	}
	f.Fuzz(func(t *testing.T, p, cwd string) {
		n := NormalizePath(p, cwd)
		if n != "" && strings.HasPrefix(n, "/") && n == strings.TrimSpace(n) && NormalizePath(n, cwd) != n {
			t.Errorf("not idempotent: %q -> %q -> %q", p, n, NormalizePath(n, cwd))
		}
	})
}

func TestNormalizeCommand(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, c := range []struct{ in, want string }{
		{"  go   test\n ./...  ", "go test ./..."},
		{"curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz'", "curl -H 'Authorization: [REDACTED:bearer_token]'"},
		{"curl 'https://x.example/?access=1&q=1&sig=ff&token=abc'", "curl 'https://x.example/?access=1&q=1&sig=REDACTED&token=REDACTED'"},
		{"git clone https://ann:pw123@github.com/x/y.git", "git clone https://ann:REDACTED@github.com/x/y.git"},
		{"", ""},
		{long, strings.Repeat("x", maxCommand) + "…"},
	} {
		if got := NormalizeCommand(c.in); got != c.want {
			t.Errorf("NormalizeCommand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestURLsIn(t *testing.T) {
	got := URLsIn(`curl -sS "https://a.example.com/x?y=1", then wget http://b.example.org/z.tar.gz; echo (https://c.example.net).`)
	want := []string{"https://a.example.com/x?y=1", "http://b.example.org/z.tar.gz", "https://c.example.net"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("URLsIn = %q, want %q", got, want)
	}
}

func TestPeerOf(t *testing.T) {
	for _, c := range []struct {
		ix            *clawledger.IndexEntry
		channel, peer string
	}{
		{nil, "", ""},
		{&clawledger.IndexEntry{Key: "agent:main:main", Channel: "telegram"}, "telegram", ""},
		{&clawledger.IndexEntry{Key: "agent:main:telegram:direct:4001"}, "telegram", "telegram:4001"},
		{&clawledger.IndexEntry{Key: "agent:ops:telegram:direct:4001"}, "telegram", "telegram:4001"},
		{&clawledger.IndexEntry{Key: "agent:main:whatsapp:acct1:direct:+15550001"}, "whatsapp", "whatsapp:+15550001"},
		{&clawledger.IndexEntry{Key: "agent:main:direct:ann", LastChannel: "Signal"}, "signal", "signal:ann"},
		{&clawledger.IndexEntry{Key: "agent:main:discord:group:g1:thread:77"}, "discord", "discord:group:g1"},
		{&clawledger.IndexEntry{Key: "agent:main:slack:channel:c9"}, "slack", "slack:channel:c9"},
		{&clawledger.IndexEntry{Key: "agent:main:cron:job-1:run:abc", Channel: "telegram"}, "", ""},
		{&clawledger.IndexEntry{Key: "agent:main:subagent:uuid"}, "", ""},
		{&clawledger.IndexEntry{Key: "agent:main:planning", ChatType: "direct", Channel: "telegram", LastTo: "4002"}, "telegram", "telegram:4002"},
		{&clawledger.IndexEntry{Key: "agent:main:x", ChatType: "group", Channel: "discord", GroupID: "G7"}, "discord", "discord:group:g7"},
		{&clawledger.IndexEntry{Key: "agent:main:x", ChatType: "direct", LastTo: "telegram:4003", Channel: "telegram"}, "telegram", "telegram:4003"},
	} {
		ch, peer := PeerOf(c.ix)
		if ch != c.channel || peer != c.peer {
			t.Errorf("PeerOf(%+v) = %q, %q, want %q, %q", c.ix, ch, peer, c.channel, c.peer)
		}
	}
}

func TestMatchesEntity(t *testing.T) {
	for _, c := range []struct {
		typ          clawledger.FacetType
		value, query string
		want         bool
	}{
		{clawledger.FacetFile, "/w/docs/report.md", "report.md", true},
		{clawledger.FacetFile, "/w/docs/report.md", "docs/report.md", true},
		{clawledger.FacetFile, "/w/docs/report.md", "/w/docs/report.md", true},
		{clawledger.FacetFile, "/w/docs/report.md", "REPORT.md", true},
		{clawledger.FacetFile, "/w/docs/myreport.md", "report.md", false},
		{clawledger.FacetFile, "/w/other/report.md", "docs/report.md", false},
		{clawledger.FacetURL, "https://example.com/a", "example.com", true},
		{clawledger.FacetURL, "https://example.com/a", "https://example.com/b", false},
		{clawledger.FacetTool, "exec", "EXEC", true},
		{clawledger.FacetPeer, "telegram:4001", "telegram:4001", true},
	} {
		if got := MatchesEntity(c.typ, c.value, c.query); got != c.want {
			t.Errorf("MatchesEntity(%s, %q, %q) = %v", c.typ, c.value, c.query, got)
		}
	}
}

func TestErrorKind(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"ls: cannot access 'x': No such file or directory", ErrNotFound},
		{"bash: foo: command not found", ErrNotFound},
		{"Permission denied (publickey)", ErrPermission},
		{"Error: exit status 1", ErrExitCode},
		{"Command exited with code 2", ErrExitCode},
		{"fetch failed", ErrNetwork},
		{"connect ECONNREFUSED 127.0.0.1:5432", ErrNetwork},
		{"429 Too Many Requests", ErrRateLimit},
		{"request timed out after 30s", ErrTimeout},
		{"Traceback (most recent call last):", ErrException},
		{"ValueError: bad input", ErrException},
		{"SyntaxError: Unexpected token }", ErrSyntax},
		{"prompt is too long: 210000 tokens", ErrContextLength},
		{"aborted", ErrAborted},
		{"something odd", ErrOther},
	} {
		if got := ErrorKind(c.text); got != c.want {
			t.Errorf("ErrorKind(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestContinuation(t *testing.T) {
	for text, want := range map[string]bool{
		"continue": true, "Continue.": true, "ok, go on": true, "yes please": true, "keep going": true,
		"continue with the migration of the orders table please": false,
		"Let's work on billing":                                  false, "": false, "One more thing about it": false,
	} {
		if got := continuation(text); got != want {
			t.Errorf("continuation(%q) = %v", text, got)
		}
	}
}

func TestTermsAndKeywords(t *testing.T) {
	tc := newTermCounter()
	tc.add("Please fix the Stripe invoice export; the invoice totals are wrong. It's the invoice's rounding.")
	tc.add("数据库迁移")
	top := tc.top(3)
	if top[0].Term != "invoice" || top[0].Count != 3 {
		t.Errorf("top term %+v, want invoice x3", top[0])
	}
	if tc.count("the") != 0 || tc.count("please") != 0 || tc.count("数据") != 1 || tc.count("迁移") != 1 {
		t.Errorf("terms %v: stopwords kept or CJK bigrams missing", tc.words)
	}
	kws := Keywords(tc.top(10), 100, map[string]int64{"invoice": 2, "stripe": 50, "wrong": 99}, 3)
	if len(kws) != 3 || kws[0].Term != "invoice" || kws[0].Confidence != 1 {
		t.Errorf("keywords %+v, want invoice first with confidence 1", kws)
	}
	for _, k := range kws {
		if k.Term == "wrong" && k.Confidence > 0.1 {
			t.Errorf("a word nearly every episode has weighs %v", k)
		}
	}
	if kws := Keywords([]clawledger.TermCount{{Term: "all", Count: 5}}, 10, map[string]int64{"all": 10}, 3); len(kws) != 0 {
		t.Errorf("a term in every episode is a keyword: %+v", kws)
	}
}
