package ledger

import (
	"strings"
	"testing"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/openclaw"
)

// TestSourceFindingFix: doctor names --fix for an inconsistent source only
// when reading it again loses nothing: not for a file that is gone, nor for
// a database's run log (OpenClaw prunes runs the ledger keeps).
func TestSourceFindingFix(t *testing.T) {
	runs := openclaw.DatabaseSourceRel(openclaw.StateDatabaseRel, openclaw.DatabaseCronRunsPart("job-1"))
	for _, c := range []struct {
		name string
		src  clawledger.Source
		fix  string
	}{
		{"live transcript", clawledger.Source{Rel: "agents/main/sessions/a.jsonl", Kind: clawledger.KindTranscript}, fixDoctor},
		{"gone transcript", clawledger.Source{Rel: "agents/main/sessions/a.jsonl", Kind: clawledger.KindTranscript, GoneAt: 1}, ""},
		{"database run log", clawledger.Source{Rel: runs, Kind: clawledger.KindCronRuns}, ""},
		{"file run log", clawledger.Source{Rel: "cron/runs/job-1.jsonl", Kind: clawledger.KindCronRuns}, fixDoctor},
	} {
		f := sourceFinding("cursor", &c.src, "stored lines disagree")
		if f.Fix != c.fix || (c.fix == "") != strings.Contains(f.Message, "left as it is") {
			t.Errorf("%s: fix %q, message %q; want fix %q", c.name, f.Fix, f.Message, c.fix)
		}
	}
}
