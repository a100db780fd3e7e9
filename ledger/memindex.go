package ledger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/embed"
	"github.com/clawledger/clawledger/openclaw"
	"github.com/clawledger/clawledger/openclaw/agentdb"
	"github.com/clawledger/clawledger/search"
)

// OpenClaw's own memory index chunks every file its memory search reads:
// the workspace's memory files, the extraPaths of its config (named
// relative to the workspace, "../notes/x.md" when outside it) and, with
// the sessions source, the transcripts (sessions/<agent>/<file>). The
// ledger holds the workspace's files and the transcripts itself, and
// indexes them; the chunks of the other files (an extra path, a
// transcript the ledger never saw) become memory-index hits, so that one
// text is never a hit twice. Their vectors are OpenClaw's when it made
// them with the configured endpoint and model.

// syncMemoryIndexes brings the search index's memory-index chunks up to
// date with OpenClaw's memory indexes in the ledger's state dirs.
func (s *Service) syncMemoryIndexes(ctx context.Context, st clawledger.Store) (search.MemoryIndexStats, error) {
	if _, ok := st.(clawledger.MemoryIndexStore); !ok {
		return search.MemoryIndexStats{}, nil
	}
	dirs, err := st.StateDirList(ctx)
	if err != nil {
		return search.MemoryIndexStats{}, err
	}
	var found []search.FoundMemoryIndex
	var held heldFiles
	var lend *agentdb.OpenAIEndpoint
	var space string
	for _, d := range dirs {
		var claims map[[2]string]agentdb.MemoryClaim // read once per state dir, when an index names entries
		for _, p := range memoryIndexes(d.Path) {
			rel, _ := filepath.Rel(d.Path, p)
			stamp, files, origins, err := memoryStamp(ctx, p)
			if err != nil { // kept as it was, and said
				found = append(found, search.FoundMemoryIndex{StateDir: d.Path, Rel: filepath.ToSlash(rel), Stamp: "unreadable",
					Read: func(context.Context) ([]search.MemoryIndexDoc, error) { return nil, err }})
				continue
			}
			if stamp == "" {
				continue
			}
			if held == nil {
				if held, err = ledgerFiles(ctx, st); err != nil {
					return search.MemoryIndexStats{}, err
				}
				lend, space = s.lender(ctx, st)
			}
			if len(origins) > 0 && claims == nil {
				claims = memoryClaims(ctx, filepath.Join(d.Path, filepath.FromSlash(openclaw.StateDatabaseRel)))
			}
			entries := entryOrigins(origins, claims)
			agent := memoryIndexAgent(filepath.ToSlash(rel))
			has := held.of(d.Path)
			found = append(found, search.FoundMemoryIndex{StateDir: d.Path, Rel: filepath.ToSlash(rel),
				Stamp: stamp + " held:" + has.digest(agent, files) + " vectors:" + space + " origins:" + originsDigest(entries),
				Read: func(ctx context.Context) ([]search.MemoryIndexDoc, error) {
					return readMemoryIndex(ctx, p, agent, has, lend)
				},
				Origins: entries})
		}
	}
	stats, err := search.SyncMemoryIndexes(ctx, st, found)
	for _, f := range stats.Failed {
		s.observer().MemoryIndexUnreadable(filepath.Join(f.StateDir, filepath.FromSlash(f.Rel)), f.Err)
	}
	return stats, err
}

// lender is the endpoint whose vectors OpenClaw's may stand in for, and
// the space of the stored vectors: when an OpenAI-compatible embedder is
// configured and the stored vectors are its (nil, "" otherwise).
func (s *Service) lender(ctx context.Context, st clawledger.Store) (*agentdb.OpenAIEndpoint, string) {
	cfg, err := s.embedConfig(ctx, st)
	if err != nil || cfg.Provider != embed.ProviderOpenAI {
		return nil, ""
	}
	e, err := s.openEmbedder(cfg)
	if err != nil {
		return nil, ""
	}
	space := search.SpaceString(e.Space())
	if stored, err := st.VectorSpace(ctx); err != nil || stored != space {
		return nil, ""
	}
	return &agentdb.OpenAIEndpoint{BaseURL: cfg.BaseURL, Model: cfg.Model, Dims: cfg.Dims}, space
}

// memoryStamp is what a memory index database holds (agentdb.MemoryStamp),
// "" when it holds none or cannot be read, with its files and its memory
// entries' origins.
func memoryStamp(ctx context.Context, p string) (string, []agentdb.MemoryFileEntry, []agentdb.MemoryOrigin, error) {
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", nil, nil, nil
	}
	db, err := agentdb.Open(ctx, p)
	if err != nil {
		return "", nil, nil, err
	}
	defer db.Close()
	stamp, err := db.MemoryStamp(ctx)
	if err != nil || stamp == "" {
		return stamp, nil, nil, err
	}
	files, err := db.MemoryFiles(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	origins, err := db.MemoryOrigins(ctx)
	return stamp, files, origins, err
}

// memoryClaims reads the short-term recall entries of a state database,
// by workspace directory name and entry key: none when it cannot be read
// (the origins then say no more than the sessions).
func memoryClaims(ctx context.Context, p string) map[[2]string]agentdb.MemoryClaim {
	out := map[[2]string]agentdb.MemoryClaim{}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return out
	}
	db, err := agentdb.Open(ctx, p)
	if err != nil {
		return out
	}
	defer db.Close()
	claims, _, _ := db.MemoryClaims(ctx)
	for _, c := range claims {
		addClaim(out, c)
	}
	return out
}

// addClaim files a claim under its workspace directory's name and under
// "" (any workspace), the first of each kept.
func addClaim(claims map[[2]string]agentdb.MemoryClaim, c agentdb.MemoryClaim) {
	for _, k := range [][2]string{{path.Base(filepath.ToSlash(c.WorkspaceDir)), c.EntryKey}, {"", c.EntryKey}} {
		if _, ok := claims[k]; !ok {
			claims[k] = c
		}
	}
}

// entryOrigins are the origins with where each entry's text lies: the
// claim of the agent's workspace (workspace-<agentId> in the state dir),
// else of the default workspace (workspace). A claim's key is the hash of
// its text, so every workspace's claim of a key holds the same text.
func entryOrigins(origins []agentdb.MemoryOrigin, claims map[[2]string]agentdb.MemoryClaim) []clawledger.MemoryEntryOrigin {
	out := make([]clawledger.MemoryEntryOrigin, len(origins))
	for i, o := range origins {
		e := clawledger.MemoryEntryOrigin{AgentID: o.AgentID, SessionID: o.SessionID, SessionKey: o.SessionKey, EntryKey: o.EntryKey,
			OriginClass: o.OriginClass, ObservedAtMs: o.ObservedAt}
		c, ok := claims[[2]string{"workspace-" + o.AgentID, o.EntryKey}]
		if !ok {
			c, ok = claims[[2]string{"workspace", o.EntryKey}]
		}
		if !ok { // a workspace openclaw.json places elsewhere: any workspace's claim
			c, ok = claims[[2]string{"", o.EntryKey}]
		}
		if ok {
			e.Path, e.StartLine, e.EndLine, e.Snippet = c.Path, c.StartLine, c.EndLine, c.Snippet
		}
		out[i] = e
	}
	return out
}

// originsDigest identifies a memory index's entry origins.
func originsDigest(origins []clawledger.MemoryEntryOrigin) string {
	h := sha256.New()
	for _, o := range origins {
		fmt.Fprintf(h, "%q %q %q %q %q %d %q %d %d %q\n", o.AgentID, o.SessionID, o.SessionKey, o.EntryKey, o.OriginClass,
			o.ObservedAtMs, o.Path, o.StartLine, o.EndLine, o.Snippet)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// memoryIndexAgent is the agent a memory index belongs to:
// memory/<agentId>.sqlite, agents/<agentId>/agent/openclaw-agent.sqlite.
func memoryIndexAgent(rel string) string {
	if a, ok := strings.CutPrefix(rel, "agents/"); ok {
		a, _, _ = strings.Cut(a, "/")
		return a
	}
	return strings.TrimSuffix(path.Base(rel), ".sqlite")
}

// heldFiles is what the ledger holds of each state dir: its agents'
// workspace files (agent, then the path in the workspace) and sessions
// (agent, then "session:" and the id).
type heldFiles map[string]heldSet

type heldSet map[[2]string]bool

func ledgerFiles(ctx context.Context, st clawledger.Store) (heldFiles, error) {
	srcs, err := st.AllSources(ctx)
	if err != nil {
		return nil, err
	}
	out := heldFiles{}
	for _, src := range srcs {
		var key string
		switch {
		case src.Kind == clawledger.KindWorkspace:
			key = search.WorkspacePath(src.Rel)
		case src.Kind == clawledger.KindTranscript && src.SessionID != "":
			key = "session:" + src.SessionID
		default:
			continue
		}
		if out[src.StateDir] == nil {
			out[src.StateDir] = heldSet{}
		}
		out[src.StateDir][[2]string{src.AgentID, key}] = true
	}
	return out, nil
}

func (h heldFiles) of(stateDir string) heldSet { return h[stateDir] }

// holds reports whether the ledger holds the file an agent's memory index
// names: a file of its workspace, or a transcript (sessions/<agent>/<file>,
// of the agent the path names).
func (h heldSet) holds(agent, source, p string) bool {
	if source == "sessions" {
		dir, name := path.Split(p)
		sf := openclaw.ClassifySessionFile(name)
		return sf.SessionID != "" && h[[2]string{path.Base(dir), "session:" + sf.SessionID}]
	}
	return h[[2]string{agent, path.Clean(p)}]
}

// digest identifies which of an agent's memory index files the set holds
// (whose chunks are then not hits): a session the index does not name
// leaves it as it was.
func (h heldSet) digest(agent string, files []agentdb.MemoryFileEntry) string {
	sum := sha256.New()
	for _, f := range files {
		if source := cmp.Or(f.Source, "memory"); h.holds(agent, source, f.Path) {
			fmt.Fprintf(sum, "%q %q\n", source, f.Path)
		}
	}
	return hex.EncodeToString(sum.Sum(nil)[:8])
}

// readMemoryIndex reads the files of a memory index whose chunks are hits
// (those the ledger does not hold), with the vectors the endpoint lend
// made when it is set.
func readMemoryIndex(ctx context.Context, p, agent string, held heldSet, lend *agentdb.OpenAIEndpoint) ([]search.MemoryIndexDoc, error) {
	db, err := agentdb.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if db.MemoryEra() == agentdb.MemoryNone {
		return []search.MemoryIndexDoc{}, nil
	}
	meta, err := db.MemoryMeta(ctx)
	if err != nil {
		return nil, err
	}
	vectors := map[string][]float32{} // OpenClaw's cache: vectors its chunk rows may lack
	reuse := lend != nil && meta.MadeBy(*lend)
	if reuse {
		keys := lend.ProviderKeys()
		if err := db.MemoryEmbeddingCache(ctx, func(c *agentdb.MemoryCacheEntry) error {
			if keys[c.ProviderKey] == c.Provider && c.Model == lend.Model {
				vectors[c.Hash] = c.Embedding
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	files, err := db.MemoryFiles(ctx)
	if err != nil {
		return nil, err
	}
	mtime := map[[2]string]int64{}
	for _, f := range files {
		mtime[[2]string{f.Path, f.Source}] = f.MtimeMs
	}
	var docs []search.MemoryIndexDoc
	at := map[[2]string]int{}
	err = db.MemoryChunks(ctx, func(c *agentdb.MemoryChunk) error {
		source := cmp.Or(c.Source, "memory")
		if held.holds(agent, source, c.Path) {
			return nil
		}
		k := [2]string{c.Path, source}
		i, ok := at[k]
		if !ok {
			i = len(docs)
			at[k] = i
			docs = append(docs, search.MemoryIndexDoc{File: clawledger.MemoryIndexFile{AgentID: agent, Path: c.Path, Source: source}, MtimeMs: mtime[k]})
		}
		mc := search.MemoryIndexChunk{StartLine: c.StartLine, EndLine: c.EndLine, Text: c.Text, Hash: c.Hash}
		if reuse && c.Model == lend.Model {
			v := c.Embedding
			if v == nil {
				v = vectors[c.Hash]
			}
			if v != nil && (lend.Dims == 0 || len(v) == lend.Dims) {
				mc.Vector = v
			}
		}
		docs[i].Chunks = append(docs[i].Chunks, mc)
		return nil
	})
	if docs == nil {
		docs = []search.MemoryIndexDoc{}
	}
	return docs, err
}
