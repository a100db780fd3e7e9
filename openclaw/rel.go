package openclaw

import (
	"path"
	"path/filepath"
	"strings"
)

// A source held in a database, not in a file of its own, is named by the
// database's path and the part of it that holds the source:
//
//	agents/<agentId>/agent/openclaw-agent.sqlite#<sessionId>       a transcript
//	agents/<agentId>/agent/openclaw-agent.sqlite#index             session windows and nodes
//	state/openclaw.sqlite#cron/jobs.json                           cron jobs
//	state/openclaw.sqlite#cron/runs/<jobId>.jsonl                  a job's runs
const databasePartSep = "#"

// Parts of a database named in source paths besides transcripts.
const (
	DatabaseIndexPart    = "index"
	DatabaseCronJobsPart = "cron/jobs.json"
)

// DatabaseCronRunsPart names a job's run log within the state database.
func DatabaseCronRunsPart(jobID string) string { return "cron/runs/" + jobID + ".jsonl" }

// DatabaseSourceRel names a part of a database as a source path.
func DatabaseSourceRel(dbRel, part string) string { return dbRel + databasePartSep + part }

// SplitDatabaseRel splits a source path named by DatabaseSourceRel. A file
// whose name merely holds a '#' is not split: the part before the
// separator must name a database.
func SplitDatabaseRel(rel string) (dbRel, part string, ok bool) {
	i := strings.Index(rel, ".sqlite"+databasePartSep)
	if i < 0 {
		return rel, "", false
	}
	return rel[:i+len(".sqlite")], rel[i+len(".sqlite")+len(databasePartSep):], true
}

// ExportRel is the path, relative to the state dir, a source is exported to:
// what the file era would have named it. A database transcript becomes
// agents/<agentId>/sessions/<sessionId>.jsonl, a run log cron/runs/<jobId>.jsonl,
// and a zstd archive its decompressed name (without .zst). Names come from
// the data (session and job ids, archive names): ok is false when an id is
// a path rather than a name (it holds a "/" or "\\", or is "." or ".."), or
// the result would not be a plain path inside the state dir.
func ExportRel(rel string) (out string, ok bool) {
	out, ok = exportRel(rel)
	return out, ok && filepath.IsLocal(filepath.FromSlash(out)) && !strings.Contains(out, "\\")
}

func exportRel(rel string) (string, bool) {
	dbRel, part, inDB := SplitDatabaseRel(rel)
	if !inDB {
		return strings.TrimSuffix(rel, ".zst"), true
	}
	if job, isRuns := strings.CutPrefix(part, "cron/runs/"); isRuns {
		return part, plainName(strings.TrimSuffix(job, ".jsonl"))
	}
	// agents/<agentId>/agent/openclaw-agent.sqlite -> agents/<agentId>/sessions/
	return path.Dir(path.Dir(dbRel)) + "/sessions/" + part + ".jsonl", plainName(part)
}

// plainName reports whether an id from the data names one file.
func plainName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/\\")
}
