package openclaw

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestConfinedResolve: the symlink rule, one case a row.
func TestConfinedResolve(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "home", ".openclaw")
	ws := filepath.Join(base, "projects", "ws") // a workspace outside the state dir
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string) {
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, []byte("x\n"), 0o644))
	}
	link := func(target, p string) {
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.Symlink(target, p))
	}
	sess := filepath.Join(state, "agents", "main", "sessions")
	file(filepath.Join(state, "credentials", "k.json"))
	file(filepath.Join(state, "agents", "main", "agent", "auth-profiles.json"))
	file(filepath.Join(state, "shared", "a.jsonl"))
	file(filepath.Join(sess, "real.jsonl"))
	file(filepath.Join(ws, "MEMORY.md"))
	file(filepath.Join(ws, ".env"))
	file(filepath.Join(base, "elsewhere", "b.jsonl"))
	link("real.jsonl", filepath.Join(sess, "same-dir.jsonl"))
	link("../../../shared/a.jsonl", filepath.Join(sess, "inside.jsonl"))
	link("../agent/auth-profiles.json", filepath.Join(sess, "auth.jsonl"))
	link("../../../credentials/k.json", filepath.Join(sess, "cred.jsonl"))
	link(filepath.Join(state, "credentials", "k.json"), filepath.Join(sess, "cred-abs.jsonl"))
	link("../../../shared/../credentials/k.json", filepath.Join(sess, "cred-dotdot.jsonl"))
	link("../../../../../elsewhere/b.jsonl", filepath.Join(sess, "outside.jsonl"))
	link(filepath.Join(ws, "MEMORY.md"), filepath.Join(sess, "to-workspace.jsonl"))
	link(filepath.Join(ws, ".env"), filepath.Join(sess, "to-workspace-env.jsonl"))
	link("chain2.jsonl", filepath.Join(sess, "chain1.jsonl"))
	link("../../../credentials", filepath.Join(state, "agents", "main", "sessions", "chain2.jsonl"))
	link("loop.jsonl", filepath.Join(sess, "loop.jsonl"))
	link("missing.jsonl", filepath.Join(sess, "dangling.jsonl"))
	link("../../../..", filepath.Join(sess, "up.jsonl")) // the state dir's parent
	link("credentials", filepath.Join(state, "workspace"))
	// a state dir reached through a symlink, and a link naming it by that path
	link(state, filepath.Join(base, "alias"))
	link(filepath.Join(base, "alias", "shared", "a.jsonl"), filepath.Join(sess, "via-alias.jsonl"))
	link(filepath.Join(base, "alias", "credentials", "k.json"), filepath.Join(sess, "via-alias-cred.jsonl"))

	for _, root := range []string{state, filepath.Join(base, "alias")} {
		c := Confine(OS, root, ws)
		// a link through the alias leaves the roots unless the alias is the root
		viaAlias := map[bool]string{true: "shared/a.jsonl", false: "outside"}[root != state]
		viaAliasCred := map[bool]string{true: "credential", false: "outside"}[root != state]
		for _, tc := range []struct {
			rel  string
			want string // the resolved path's tail, or an error: "credential", "outside", "loop", "missing", "notdir"
		}{
			{"agents/main/sessions/real.jsonl", "agents/main/sessions/real.jsonl"},
			{"agents/main/sessions/same-dir.jsonl", "agents/main/sessions/real.jsonl"},
			{"agents/main/sessions/inside.jsonl", "shared/a.jsonl"},
			{"agents/main/sessions/via-alias.jsonl", viaAlias},
			{"agents/main/sessions/to-workspace.jsonl", "ws/MEMORY.md"},
			{"agents/main/sessions/auth.jsonl", "credential"},
			{"agents/main/sessions/cred.jsonl", "credential"},
			{"agents/main/sessions/cred-abs.jsonl", "credential"},
			{"agents/main/sessions/cred-dotdot.jsonl", "credential"},
			{"agents/main/sessions/chain1.jsonl", "credential"},
			{"agents/main/sessions/via-alias-cred.jsonl", viaAliasCred},
			{"agents/main/sessions/to-workspace-env.jsonl", "credential"},
			{"workspace/MEMORY.md", "credential"},
			{"credentials/k.json", "credential"},
			{"agents/main/sessions/outside.jsonl", "outside"},
			{"agents/main/sessions/up.jsonl", "outside"},
			{"agents/main/sessions/loop.jsonl", "loop"},
			{"agents/main/sessions/dangling.jsonl", "missing"},
			{"agents/main/sessions/real.jsonl/x", "notdir"},
			{"../elsewhere/b.jsonl", "outside"},
		} {
			real, fi, err := c.Resolve(filepath.Join(root, filepath.FromSlash(tc.rel)))
			var le *LinkError
			var got string
			switch {
			case errors.As(err, &le) && le.Reason == ReasonCredential:
				got = "credential"
			case errors.As(err, &le) && le.Reason == ReasonOutside:
				got = "outside"
			case errors.Is(err, syscall.ELOOP):
				got = "loop"
			case errors.Is(err, os.ErrNotExist):
				got = "missing"
			case errors.Is(err, syscall.ENOTDIR):
				got = "notdir"
			case err != nil:
				got = err.Error()
			case fi.Mode()&os.ModeSymlink != 0:
				got = "a symlink: " + real
			case strings.HasSuffix(filepath.ToSlash(real), "/"+tc.want):
				got = tc.want
			default:
				got = real
			}
			if got != tc.want {
				t.Errorf("root %s: %s resolves to %q, want %q", root, tc.rel, got, tc.want)
			}
			if le != nil && strings.Contains(le.Error(), "k.json") && !strings.HasSuffix(tc.rel, "k.json") {
				t.Errorf("%s: the error names the link's target: %v", tc.rel, le)
			}
		}
	}
}

// TestConfinedWorkspaceHoldsStateDir: a workspace root that holds the
// state dir (a workspace set to the home directory) does not open the
// state dir's credentials to a symlink.
func TestConfinedWorkspaceHoldsStateDir(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, ".openclaw")
	if err := os.MkdirAll(filepath.Join(state, "credentials"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "credentials", "k.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".openclaw/credentials/k.json", filepath.Join(home, "MEMORY.md")); err != nil {
		t.Fatal(err)
	}
	_, _, err := Confine(OS, state, home).Resolve(filepath.Join(home, "MEMORY.md"))
	var le *LinkError
	if !errors.As(err, &le) || le.Reason != ReasonCredential {
		t.Fatalf("resolve: %v, want a credential link refused", err)
	}
}

// swapFS replaces the file it opens just before opening it: the race
// between resolving a path and opening it.
type swapFS struct {
	FS
	with string
}

func (s swapFS) Open(name string) (File, error) {
	if err := os.Rename(s.with, name); err != nil {
		return nil, err
	}
	return s.FS.Open(name)
}

// TestConfinedOpenRace: a file replaced between its resolution and its
// opening is refused, not read; a symlink swapped in for the file itself
// is not followed (O_NOFOLLOW).
func TestConfinedOpenRace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	other := filepath.Join(dir, "b.jsonl")
	for _, f := range []string{p, other} {
		if err := os.WriteFile(f, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Confine(swapFS{FS: OS, with: other}, dir).Open(p); err == nil || !strings.Contains(err.Error(), "changed while it was opened") {
		t.Fatalf("a swapped file: %v", err)
	}
	if err := os.Symlink("a.jsonl", other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Confine(swapFS{FS: OS, with: other}, dir).Open(p); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("a symlink swapped in: %v, want ELOOP from O_NOFOLLOW", err)
	}
}
