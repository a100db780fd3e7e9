package cortex

import (
	"regexp"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/redact"
	"github.com/clawledger/clawledger/transcript"
)

// finding is one facet value found in one entry.
type finding struct {
	typ   clawledger.FacetType
	value string
	raw   string  // the value as written, when normalizing changed it (an alias link)
	conf  float64 // 1 when extracted, less when inferred
	mode  fileMode
	n     int64 // how many times the entry names it (1 unless a list repeats it)
}

// fileMode says what a tool did to a file.
type fileMode uint8

const (
	fileNone fileMode = iota
	fileRead
	fileModified
)

// skillConfidence is the confidence of a skill inferred from reading its
// SKILL.md: the agent read its instructions, which is how skills are used,
// but it may only have looked.
const skillConfidence = 0.8

// fileKeys are the argument names that hold the file a tool acted on.
var fileKeys = []string{"path", "file_path", "filePath", "file", "filename", "notebook_path", "target_file", "paths", "files"}

// urlKeys are the argument names that hold a URL.
var urlKeys = []string{"url", "uri", "href", "link", "targetUrl", "target_url"}

// commandKeys are the argument names that hold a shell command.
var commandKeys = []string{"command", "cmd", "script"}

// modifyingWords in a tool's name say it changes the files it names.
var modifyingWords = []string{"write", "edit", "patch", "create", "delete", "remove", "replace", "move", "rename", "insert", "append"}

func modeOf(tool string) fileMode {
	t := strings.ToLower(tool)
	for _, w := range modifyingWords {
		if strings.Contains(t, w) {
			return fileModified
		}
	}
	return fileRead
}

// shellTool reports whether a tool runs shell commands.
func shellTool(tool string) bool {
	t := strings.ToLower(tool)
	if strings.Contains(t, "editor") {
		return false // str_replace_editor's "command" is view, create, ...
	}
	for _, w := range []string{"exec", "bash", "shell", "terminal", "command", "powershell"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return t == "process" || t == "run" || t == "sh" || t == "zsh" || t == "cmd"
}

var (
	skillFile  = regexp.MustCompile(`(?i)(?:^|/)skills/([^/]+)/skill\.md$`)
	patchFiles = regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
)

var argParsers fastjson.ParserPool

// toolCall returns the facets a tool call names: the tool, the files it
// read or changed, the commands it ran, the URLs it fetched or named, and
// a skill it read.
func toolCall(c *clawledger.ToolCall, cwd string) []finding {
	out := []finding{{typ: clawledger.FacetTool, value: c.Name, conf: 1, n: 1}}
	if len(c.Arguments) == 0 || c.Arguments[0] != '{' {
		return out
	}
	p := argParsers.Get()
	defer argParsers.Put(p)
	v, err := p.ParseBytes(c.Arguments)
	if err != nil || v.Type() != fastjson.TypeObject {
		return out
	}
	mode := modeOf(c.Name)
	for _, k := range fileKeys {
		for _, s := range stringArgs(v.Get(k)) {
			if URLsIn(s) != nil {
				out = appendURL(out, s)
				continue
			}
			out = appendFile(out, s, cwd, mode)
			if m := skillFile.FindStringSubmatch(s); m != nil && mode == fileRead {
				out = append(out, finding{typ: clawledger.FacetSkill, value: strings.ToLower(m[1]), conf: skillConfidence, n: 1})
			}
		}
	}
	for _, k := range []string{"input", "patch"} {
		if s := string(v.GetStringBytes(k)); strings.Contains(s, "*** ") {
			for _, m := range patchFiles.FindAllStringSubmatch(s, -1) {
				out = appendFile(out, firstOf(m[1], m[2]), cwd, fileModified)
			}
		}
	}
	if shellTool(c.Name) {
		for _, k := range commandKeys {
			if cmd := strings.Join(stringArgs(v.Get(k)), " "); cmd != "" {
				if n := NormalizeCommand(cmd); n != "" {
					out = append(out, finding{typ: clawledger.FacetCommand, value: n, conf: 1, n: 1})
				}
				for _, u := range URLsIn(cmd) {
					out = appendURL(out, u)
				}
				break
			}
		}
	}
	for _, k := range urlKeys {
		for _, s := range stringArgs(v.Get(k)) {
			out = appendURL(out, s)
		}
	}
	if t := strings.ToLower(c.Name); t == "skill" || t == "use_skill" || t == "load_skill" {
		if s := strings.TrimSpace(firstOf(string(v.GetStringBytes("skill")), string(v.GetStringBytes("name")))); s != "" {
			out = append(out, finding{typ: clawledger.FacetSkill, value: strings.ToLower(redact.Secrets(s)), conf: 1, n: 1})
		}
	}
	return out
}

// stringArgs returns a string argument, or the strings of a list.
func stringArgs(v *fastjson.Value) []string {
	if v == nil {
		return nil
	}
	switch v.Type() {
	case fastjson.TypeString:
		if s := strings.TrimSpace(string(v.GetStringBytes())); s != "" {
			return []string{s}
		}
	case fastjson.TypeArray:
		var out []string
		for _, x := range v.GetArray() {
			if x.Type() == fastjson.TypeString {
				if s := strings.TrimSpace(string(x.GetStringBytes())); s != "" {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return nil
}

func appendFile(out []finding, raw, cwd string, mode fileMode) []finding {
	v := NormalizePath(raw, cwd)
	if v == "" {
		return out
	}
	f := finding{typ: clawledger.FacetFile, value: v, conf: 1, mode: mode, n: 1}
	if masked := mask(strings.TrimSpace(raw)); masked != v {
		f.raw = masked
	}
	return append(out, f)
}

func appendURL(out []finding, raw string) []finding {
	v := NormalizeURL(raw)
	if v == "" {
		return out
	}
	f := finding{typ: clawledger.FacetURL, value: v, conf: 1, n: 1}
	if masked := mask(strings.TrimSpace(raw)); masked != v {
		f.raw = masked
	}
	return append(out, f)
}

// compactionFiles are the files a compaction or branch summary lists.
func compactionFiles(c *clawledger.Compaction, cwd string) []finding {
	var out []finding
	for _, f := range c.ReadFiles {
		out = appendFile(out, f, cwd, fileRead)
	}
	for _, f := range c.ModifiedFiles {
		out = appendFile(out, f, cwd, fileModified)
	}
	return out
}

// Error kinds, the values of the error facet.
const (
	ErrExitCode      = "exit_code"
	ErrNotFound      = "not_found"
	ErrPermission    = "permission_denied"
	ErrTimeout       = "timeout"
	ErrNetwork       = "network"
	ErrRateLimit     = "rate_limit"
	ErrContextLength = "context_length"
	ErrAborted       = "aborted"
	ErrSyntax        = "syntax"
	ErrException     = "exception"
	ErrOther         = "other"
)

// errorKinds classify an error's text (lower case), the most specific
// first: by phrases it contains, or HTTP status codes it names.
var errorKinds = []struct {
	kind    string
	phrases []string
	codes   []string
}{
	{ErrRateLimit, []string{"rate limit", "rate-limit", "ratelimit", "too many requests", "overloaded"}, []string{"429"}},
	{ErrContextLength, []string{"context length", "context window", "maximum context", "too many tokens", "prompt is too long"}, nil},
	{ErrTimeout, []string{"timed out", "time out", "timeout", "etimedout", "deadline exceeded"}, nil},
	{ErrPermission, []string{"permission denied", "eacces", "eperm", "operation not permitted", "forbidden", "unauthorized", "unauthorised"}, []string{"401", "403"}},
	{ErrNotFound, []string{"no such file", "enoent", "not found", "does not exist", "cannot find"}, []string{"404"}},
	{ErrNetwork, []string{"fetch failed", "econnrefused", "econnreset", "enotfound", "enetunreach", "getaddrinfo", "socket hang up",
		"network", "connection refused", "connection reset", "could not resolve"}, nil},
	{ErrAborted, []string{"abort", "canceled", "cancelled", "interrupted", "killed", "sigterm", "sigint"}, nil},
	{ErrSyntax, []string{"syntaxerror", "syntax error", "parse error", "unexpected token", "invalid json", "unexpected end of"}, nil},
	{ErrException, []string{"traceback", "exception", "panic:"}, nil},
	{ErrExitCode, []string{"exit code", "exit status", "exited with code", "exited with status", "exit=", "non-zero exit"}, nil},
}

// exceptionClass is an error that opens with an exception class
// ("ValueError: ...").
var exceptionClass = regexp.MustCompile(`^[A-Za-z_.]+(?:Error|Exception):`)

// ErrorKind classifies an error's text.
func ErrorKind(text string) string {
	if len(text) > 1024 {
		text = text[:1024]
	}
	lower := strings.ToLower(text)
	for _, k := range errorKinds {
		for _, p := range k.phrases {
			if strings.Contains(lower, p) {
				return k.kind
			}
		}
		for _, c := range k.codes {
			if containsNumber(lower, c) {
				return k.kind
			}
		}
		if k.kind == ErrException && exceptionClass.MatchString(text) {
			return k.kind
		}
	}
	return ErrOther
}

// containsNumber reports whether s holds the number n not glued to other
// digits.
func containsNumber(s, n string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], n)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(n)
		if (j == 0 || s[j-1] < '0' || s[j-1] > '9') && (end == len(s) || s[end] < '0' || s[end] > '9') {
			return true
		}
		i = j + 1
	}
}

// maxErrorText bounds an error in an episode summary.
const maxErrorText = 160

// errorLine is an error as an episode summary lists it.
func errorLine(source, msg string) string {
	msg = mask(strings.Join(strings.Fields(msg), " "))
	if len(msg) > maxErrorText {
		msg = openclaw.Clip(msg, maxErrorText) + "…"
	}
	if source == "" {
		return msg
	}
	return source + ": " + msg
}

// toolFailure applies the error rule to a tool result: its kind and
// summary line, ok false when it did not fail.
func toolFailure(m *clawledger.Message) (kind, line string, ok bool) {
	msg, failed := transcript.Failure(m)
	if !failed {
		return "", "", false
	}
	kind = ErrorKind(msg)
	if kind == ErrOther && m.ExitCode != nil && *m.ExitCode != 0 {
		kind = ErrExitCode
	}
	return kind, errorLine(firstOf(m.ToolName, "tool"), msg), true
}

// assistantFailure is an assistant message that ended in an error.
func assistantFailure(m *clawledger.Message) (kind, line string, ok bool) {
	if m.StopReason != "error" && m.StopReason != "aborted" && m.ErrorMessage == "" {
		return "", "", false
	}
	msg := firstOf(strings.TrimSpace(m.ErrorMessage), m.StopReason)
	kind = ErrorKind(msg)
	if m.StopReason == "aborted" && kind == ErrOther {
		kind = ErrAborted
	}
	return kind, errorLine("assistant", msg), true
}
