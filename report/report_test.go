package report

import (
	"strings"
	"testing"
	"time"

	"github.com/clawledger/clawledger"
)

func TestMatchCwd(t *testing.T) {
	for _, tc := range []struct {
		name, cwd, component string
	}{
		{"eastore", "/Users/x/dev/Eastore-Web", "Eastore-Web"},
		{"EASTORE", "/Users/x/dev/Eastore-Web", "Eastore-Web"},
		{"eastore-web", "/Users/x/dev/Eastore_Web", "Eastore_Web"},
		{"eastore web", "/Users/x/dev/EastoreWeb", "EastoreWeb"},
		{"store", "/Users/x/dev/Eastore-Web", "Eastore-Web"}, // any component containing the name
		{"web", "/src/eastore/eastore-web", "eastore-web"},   // the deepest component wins
		{"eastore", "/src/eastore/eastore-web", "eastore-web"},
		{"dev/eastore", "/Users/x/dev/Eastore-Web", "dev/Eastore-Web"},
		{"x/eastore", "/Users/x/dev/Eastore-Web", ""}, // components must be consecutive
		{"项目", "/home/用户/项目", "项目"},
		{`C:\work\app`, `C:\work\app`, `C:/work/app`},
		{"eastore", "/Users/x/dev/west", ""},
		{"eastore", "", ""},
	} {
		p, ok := NewProject(tc.name)
		if !ok {
			t.Fatalf("NewProject(%q) not ok", tc.name)
		}
		m, matched := p.MatchCwd(tc.cwd)
		if matched != (tc.component != "") || m.Component != tc.component {
			t.Errorf("%q MatchCwd(%q) = %+v, %v; want component %q", tc.name, tc.cwd, m, matched, tc.component)
		}
		if matched && (m.By != "cwd" || m.Cwd != tc.cwd) {
			t.Errorf("%q MatchCwd(%q) = %+v", tc.name, tc.cwd, m)
		}
	}
	if _, ok := NewProject(" -_./ "); ok {
		t.Error("a name without letters or digits was accepted")
	}
}

func TestMatchText(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       bool
	}{
		{"eastore", "v4 says hi; my project is Eastore", true},
		{"eastore", "Eastore's build is red", true},
		{"eastore", "eastore-web is down", true},
		{"eastore", "the EASTORE_API key", true},
		{"eastore", "beastoreroom", false},
		{"eastore", "east ore", false},
		{"eastore web", "the Eastore Web app", true},
		{"eastore web", "Eastore-Web", true},
		{"eastore web", "Eastore only", false},
		{"api", "rapid deploys", false},
		{"api", "the APIs are slow", true},
		{"项目", "这个项目很好", true}, // no spaces between CJK words: anywhere in the run
		{"项目", "项目 部署", true},
		{"eastore", "", false},
	} {
		p, _ := NewProject(tc.name)
		excerpt, ok := p.MatchText(tc.text)
		if ok != tc.want {
			t.Errorf("%q MatchText(%q) = %v, want %v", tc.name, tc.text, ok, tc.want)
		}
		if ok && excerpt == "" {
			t.Errorf("%q MatchText(%q): empty excerpt", tc.name, tc.text)
		}
	}
	p, _ := NewProject("eastore")
	long := strings.Repeat("lorem ipsum ", 40) + "and then Eastore came up " + strings.Repeat("dolor sit ", 40)
	excerpt, _ := p.MatchText(long)
	if !strings.Contains(excerpt, "Eastore") || len(excerpt) > 130 || !strings.HasPrefix(excerpt, "…") || !strings.HasSuffix(excerpt, "…") {
		t.Errorf("excerpt %q", excerpt)
	}
}

func TestProjectCwd(t *testing.T) {
	for cwd, want := range map[string]bool{
		"":                                   false,
		"   ":                                false,
		"/home/demo/.openclaw/workspace":     false,
		"/home/demo/.openclaw/workspace-ops": false,
		"/home/demo/.openclaw-work/x":        false,
		"/Users/old/.clawdbot/workspace":     false,
		"/srv/app":                           true,
		"/Users/x/dev/Eastore-Web":           true,
		"/home/demo/openclaw-notes":          true,
	} {
		if got := ProjectCwd(cwd); got != want {
			t.Errorf("ProjectCwd(%q) = %v, want %v", cwd, got, want)
		}
	}
}

func TestBucket(t *testing.T) {
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	ms := func(s string) int64 {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixMilli()
	}
	for _, tc := range []struct {
		p     Period
		ts    string
		loc   *time.Location
		start time.Weekday
		want  string
	}{
		{Daily, "2026-03-14T20:30:00Z", time.UTC, time.Sunday, "2026-03-14"},
		{Daily, "2026-03-14T20:30:00Z", kolkata, time.Sunday, "2026-03-15"},
		{Weekly, "2026-03-14T12:00:00Z", time.UTC, time.Sunday, "2026-03-08"}, // a Saturday
		{Weekly, "2026-03-15T12:00:00Z", time.UTC, time.Sunday, "2026-03-15"}, // a Sunday
		{Weekly, "2026-03-15T12:00:00Z", time.UTC, time.Monday, "2026-03-09"},
		{Weekly, "2026-03-01T00:00:00Z", time.UTC, time.Monday, "2026-02-23"},
		{Monthly, "2026-03-31T23:50:00Z", time.UTC, time.Sunday, "2026-03"},
		{Monthly, "2026-03-31T23:50:00Z", kolkata, time.Sunday, "2026-04"},
	} {
		if got := Bucket(tc.p, ms(tc.ts), tc.loc, tc.start); got != tc.want {
			t.Errorf("Bucket(%s, %s, %s, %s) = %s, want %s", tc.p, tc.ts, tc.loc, tc.start, got, tc.want)
		}
	}
	if _, err := ParsePeriod("hourly"); err == nil {
		t.Error("ParsePeriod accepted hourly")
	}
}

func TestParseWeekday(t *testing.T) {
	for in, want := range map[string]time.Weekday{"sun": time.Sunday, "Monday": time.Monday, "SAT": time.Saturday, "wednes": time.Wednesday} {
		if got, err := ParseWeekday(in); err != nil || got != want {
			t.Errorf("ParseWeekday(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mo", "someday", "mondays"} {
		if _, err := ParseWeekday(in); err == nil {
			t.Errorf("ParseWeekday(%q) accepted", in)
		}
	}
}

func TestUsageReport(t *testing.T) {
	r := NewUsageReport()
	add := func(key, model string, ts, messages, in, out, tokens int64, cost float64) {
		r.Add(key, &clawledger.UsageGroup{First: ts, Last: ts + 1, Model: model, Provider: "p-" + model, Messages: messages,
			Input: in, Output: out, Tokens: tokens, Cost: cost})
	}
	add("b", "m1", 20, 1, 10, 1, 11, 0.5)
	add("a", "m1", 10, 2, 100, 10, 110, 1)
	add("a", "m2", 5, 1, 50, 5, 55, 2)
	add("a", "", 15, 1, 1, 1, 500, 0)
	add("a", "m1", 30, 1, 1, 1, 2, 0)
	rows := r.Rows()
	if len(rows) != 2 || rows[0].Key != "a" || rows[1].Key != "b" {
		t.Fatalf("rows %+v", rows)
	}
	a := rows[0]
	if a.Input != 152 || a.Output != 17 || a.Total != 110+55+500+2 || a.Cost != 3 || a.Messages != 5 || a.First != 5 || a.Last != 31 {
		t.Errorf("row a %+v, first %d, last %d", a.Tokens, a.First, a.Last)
	}
	var names []string
	for _, m := range a.Models {
		names = append(names, m.Model+"/"+m.Provider)
	}
	if strings.Join(names, ",") != "m2/p-m2,m1/p-m1,unknown/p-" {
		t.Errorf("models by cost: %v", names)
	}
	if m1 := a.Models[1]; m1.Messages != 3 || m1.Input != 101 {
		t.Errorf("m1 in row a: %+v", m1.Tokens)
	}
	if r.Totals.Input != 162 || r.Totals.Messages != 6 || r.Totals.Cost != 3.5 {
		t.Errorf("totals %+v", r.Totals)
	}
}

func FuzzProjectMatch(f *testing.F) {
	for _, s := range [][2]string{{"eastore", "/Users/x/Eastore-Web"}, {"a/b", "a/b/c"}, {"项目", "我的项目"}, {"\xff", "\xfe/\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, s string) {
		p, ok := NewProject(name)
		if !ok {
			return
		}
		p.MatchCwd(s)
		if excerpt, ok := p.MatchText(s); ok && excerpt == "" {
			t.Fatalf("match without an excerpt: %q in %q", name, s)
		}
	})
}
