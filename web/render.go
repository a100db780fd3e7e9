package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/clawledger/clawledger/internal/sanitize"
	"github.com/clawledger/clawledger/search"
	"github.com/clawledger/clawledger/view"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// page is what every page template gets.
type page struct {
	Title  string
	Nav    string // the menu item to mark current
	CSRF   string
	Writes bool   // the server takes writes: forms to append and redact
	Live   string // what the page's script keeps current: "session", "overview" or ""
	Q      string // the search box's text
	Data   any
}

// pageNames are the pages, each parsed with the layout and the parts
// they share.
var pageNames = []string{"overview", "sessions", "session", "search", "usage", "tools", "toolfailures", "cron", "episodes", "replay", "status", "login", "error"}

func parseTemplates() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/entries.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{"fragment": base}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// render answers with a page; a template that fails is an internal error.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.CSRF, p.Writes = s.guard.csrf, s.allowWrites
	var b bytes.Buffer
	var err error
	if name == "fragment" { // the entries a live page appends
		err = s.pages[name].ExecuteTemplate(&b, name, p.Data)
	} else {
		err = s.pages[name].ExecuteTemplate(&b, "layout.html", p)
	}
	if err != nil {
		s.log.Error("page failed", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if status != http.StatusOK {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		w.Write(b.Bytes())
		return
	}
	send(w, r, "text/html; charset=utf-8", b.Bytes())
}

// errorPage answers a page request with err, by the one mapping.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, err error) {
	code, status, message := s.errorStatus(err)
	s.logError(r, err, status)
	s.render(w, r, status, "error", page{Title: http.StatusText(status), Data: map[string]any{
		"Status": status, "Code": code, "Message": message, "Login": status == http.StatusUnauthorized}})
}

// static serves the stylesheet and the script.
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
}

var funcs = template.FuncMap{
	"num":        func(n int64) string { return humanize.Comma(n) },
	"tokens":     shortNumber,
	"money":      money,
	"pct":        func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"ms":         duration,
	"shortTime":  shortTime,
	"sessionURL": sessionURL,
	"refURL":     func(ref string) string { return "/sessions/" + url.PathEscape(ref) },
	"runClass":   runClass,
	"add":        func(a, b int) int { return a + b },
	"deref":      deref,
	"derefInt":   func(p *int64) int64 { return *p },
	"join":       strings.Join,
	// query is one k=v of a link's query; a template.URL, so that the
	// template keeps its "=" (each side is escaped here)
	"query":   func(k, v string) template.URL { return template.URL(url.QueryEscape(k) + "=" + url.QueryEscape(v)) },
	"payload": func(p *json.RawMessage) string { return string(*p) },
	"shown":   sanitize.Text,
}

// shortNumber is a count in a few characters: 950, 12.3k, 4.5M.
func shortNumber(n int64) string {
	x := float64(n)
	switch {
	case math.Abs(x) >= 1e9:
		return fmt.Sprintf("%.1fB", x/1e9)
	case math.Abs(x) >= 1e6:
		return fmt.Sprintf("%.1fM", x/1e6)
	case math.Abs(x) >= 1e4:
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return humanize.Comma(n)
}

func money(x float64) string {
	switch {
	case x == 0:
		return "$0"
	case x < 1:
		return fmt.Sprintf("$%.4f", x)
	case x < 100:
		return fmt.Sprintf("$%.2f", x)
	}
	return "$" + humanize.Commaf(math.Round(x))
}

// axisMoney is an amount on a chart's axis: as few digits as its scale needs.
func axisMoney(x float64) string {
	switch {
	case x == 0:
		return "$0"
	case x < 0.1:
		return fmt.Sprintf("$%.3f", x)
	case x < 10:
		return fmt.Sprintf("$%.2f", x)
	}
	return money(x)
}

func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// shortTime renders an RFC 3339 time as the page shows it before the
// script puts it in the browser's time zone.
func shortTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// sessionRef is how a link names a transcript: its session id, unless
// that could name another transcript too (an archive, a fork or topic
// file, a vanished file), then its path.
func sessionRef(v view.Session) string {
	if v.Class == "live" && !v.Flags.Gone {
		return v.SessionID
	}
	return v.Path
}

func sessionURL(v view.Session) string { return "/sessions/" + url.PathEscape(sessionRef(v)) }

// runClass is how a cron run's status is shown: ok, skipped, or failed
// (anything else, as cron's failures count it).
func runClass(status string) string {
	switch status {
	case "ok":
		return "ok"
	case "skipped", "":
		return "muted"
	}
	return "bad"
}

// lineURL links to one line of a transcript: the page holding it, at its anchor.
func lineURL(ref string, line int64) string {
	return fmt.Sprintf("/sessions/%s?at=%d#L%d", url.PathEscape(ref), line, line)
}

// segment is a piece of a search snippet, matched or not.
type segment struct {
	Text string
	Mark bool
}

// marks cuts a snippet at the search engine's match marks, its control
// characters shown, not acted on.
func marks(s string) []segment {
	var out []segment
	for s != "" {
		i := strings.Index(s, search.MarkStart)
		if i < 0 {
			out = append(out, segment{Text: sanitize.Text(s)})
			break
		}
		if i > 0 {
			out = append(out, segment{Text: sanitize.Text(s[:i])})
		}
		s = s[i+len(search.MarkStart):]
		j := strings.Index(s, search.MarkEnd)
		if j < 0 {
			out = append(out, segment{Text: sanitize.Text(s), Mark: true})
			break
		}
		out = append(out, segment{Text: sanitize.Text(s[:j]), Mark: true})
		s = s[j+len(search.MarkEnd):]
	}
	return out
}
