package openclaw

import (
	"testing"

	"github.com/clawledger/clawledger"
)

func TestClassifySessionFile(t *testing.T) {
	tests := []struct {
		name       string
		class      clawledger.FileClass
		sessionID  string
		topic      string
		compressed bool
	}{
		{"3a8b6367-dc3f-4edd-8c58-d7da3a564e3f.jsonl", clawledger.ClassLive, "3a8b6367-dc3f-4edd-8c58-d7da3a564e3f", "", false},
		{"abc-topic-ops%2Fdeploys%20%231.jsonl", clawledger.ClassTopic, "abc", "ops/deploys #1", false},
		{"2026-03-14T12-00-00-000Z_f0000000-0000-4000-8000-00000000000f.jsonl", clawledger.ClassFork, "f0000000-0000-4000-8000-00000000000f", "", false},
		{"abc.jsonl.deleted.2026-04-27T18-06-20.564Z", clawledger.ClassDeleted, "abc", "", false},
		{"abc.jsonl.deleted.2026-11-21T10-46-14.657Z.5bd0ca82e4104a38bf7fe475e621efb1.zst", clawledger.ClassDeleted, "abc", "", true},
		{"abc.jsonl.reset.2026-04-27T18-06-20.564Z", clawledger.ClassReset, "abc", "", false},
		{"abc-topic-x.jsonl.reset.2026-04-27T18-06-20.564Z", clawledger.ClassReset, "abc", "x", false},
		{"abc.jsonl.migrated", clawledger.ClassMigrated, "abc", "", false},
		{"sessions.json", clawledger.ClassIndex, "", "", false},
		{"sessions.json.bak.1710410000000", clawledger.ClassSkipped, "", "", false},
		{"sessions.json.1234.tmp", clawledger.ClassSkipped, "", "", false},
		{"abc.jsonl.bak-4242-1710410000000", clawledger.ClassSkipped, "", "", false},
		{"abc.jsonl.lock", clawledger.ClassSkipped, "", "", false},
		{"abc.checkpoint.0193a1b2-c3d4.jsonl", clawledger.ClassSkipped, "", "", false},
		{"abc.trajectory.jsonl", clawledger.ClassSkipped, "", "", false},
		{"abc.trajectory-path.json", clawledger.ClassSkipped, "", "", false},
		{"notes.txt", clawledger.ClassUnknown, "", "", false},
		{"bad name!.jsonl", clawledger.ClassUnknown, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ClassifySessionFile(tc.name)
			if got.Class != tc.class || got.SessionID != tc.sessionID || got.Topic != tc.topic || got.Compressed != tc.compressed {
				t.Fatalf("ClassifySessionFile(%q) = %+v, want class %s id %q topic %q compressed %v", tc.name, got, tc.class, tc.sessionID, tc.topic, tc.compressed)
			}
		})
	}
}

func TestIsCredentialPath(t *testing.T) {
	for _, p := range []string{"agents/main/agent/auth-profiles.json", "agents/ops/agent/auth.json", "credentials", "credentials/whatsapp/creds.json",
		"identity/device.json", "devices/paired.json", ".env", "workspace/.env", "workspace/.env.local", "exec-approvals.json"} {
		if !IsCredentialPath(p) {
			t.Errorf("IsCredentialPath(%q) = false", p)
		}
	}
	for _, p := range []string{"agents/main/sessions/abc.jsonl", "cron/jobs.json", "workspace/MEMORY.md", "agents/identity-bot/sessions/x.jsonl",
		"workspace/memory/identity/who-i-am.md", "workspace/memory/devices/laptop.md", "workspace/credentials-notes.md"} {
		if IsCredentialPath(p) {
			t.Errorf("IsCredentialPath(%q) = true", p)
		}
	}
}
