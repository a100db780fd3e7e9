package skill

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
)

// TestSkillFormat: SKILL.md is in OpenClaw's skill format: YAML
// frontmatter whose name is the folder's, a one-line description that
// plain YAML reads as one string, and metadata as one line of JSON (what
// OpenClaw's YAML parser and its single-line fallback both read) that
// requires the clawledger binary.
func TestSkillFormat(t *testing.T) {
	md := string(Files()["SKILL.md"])
	body, ok := strings.CutPrefix(md, "---\n")
	front, rest, ok2 := strings.Cut(body, "\n---\n")
	if !ok || !ok2 || !strings.HasPrefix(strings.TrimSpace(rest), "# ") {
		t.Fatalf("no frontmatter:\n%s", md)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(front, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(line, " ") {
			t.Fatalf("not a one-line key: %q", line)
		}
		fields[k] = v
	}
	if fields["name"] != Name {
		t.Errorf("name %q, want %q (the folder's)", fields["name"], Name)
	}
	d := fields["description"]
	if len(d) < 80 || strings.Contains(d, ": ") || strings.Contains(d, " #") || strings.ContainsAny(d[:1], `"'{[&*!|>%@`+"`") || strings.ContainsAny(d, "<>") {
		t.Errorf("description is not one plain YAML string a model can act on: %q", d)
	}
	var meta struct {
		OpenClaw struct {
			Requires struct {
				Bins []string `json:"bins"`
			} `json:"requires"`
		} `json:"openclaw"`
	}
	if err := json.Unmarshal([]byte(fields["metadata"]), &meta); err != nil || len(meta.OpenClaw.Requires.Bins) != 1 || meta.OpenClaw.Requires.Bins[0] != "clawledger" {
		t.Errorf("metadata %q: %v, %+v", fields["metadata"], err, meta)
	}
	for _, step := range []string{"clawledger search", "--around", "--last", "--json", "--agent"} {
		if !strings.Contains(rest, step) {
			t.Errorf("the instructions never use %s", step)
		}
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	path, status, err := Install(dir, false)
	if err != nil || status != Installed || path != filepath.Join(dir, Name) {
		t.Fatalf("first install: %s %s %v", path, status, err)
	}
	got, err := os.ReadFile(filepath.Join(path, "SKILL.md"))
	if err != nil || string(got) != string(Files()["SKILL.md"]) {
		t.Fatalf("installed SKILL.md: %v", err)
	}
	if _, status, err := Install(dir, false); err != nil || status != Unchanged {
		t.Errorf("again: %s %v", status, err)
	}
	if err := os.WriteFile(filepath.Join(path, "SKILL.md"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Install(dir, false); !errors.Is(err, ErrChanged) || clawledger.ErrorCode(err) != clawledger.ECONFLICT {
		t.Errorf("over an edited skill: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(path, "SKILL.md")); string(got) != "edited" {
		t.Error("the edited skill was replaced without force")
	}
	if _, status, err := Install(dir, true); err != nil || status != Replaced {
		t.Errorf("with force: %s %v", status, err)
	}
	if entries, _ := os.ReadDir(path); len(entries) != len(Files()) {
		t.Errorf("the folder holds %d files, want %d (no temporary file left)", len(entries), len(Files()))
	}
}
