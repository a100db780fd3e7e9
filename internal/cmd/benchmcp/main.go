// Command benchmcp measures the latency of MCP's search tool over a ledger
// built by gensearch: each query is called -n times as tools/call over
// stdio on the built binary (`clawledger mcp`: JSON-RPC, the query path's
// refresh, the search, the byte budget, the answer's encoding), alternating
// with the same search through the ledger service in process without a
// refresh (the reference), and the p50, p95 and p99 of both are printed as
// a Markdown table with their ratio. With -state the server refreshes from
// that (unchanged) state dir before each call, as it does for a user.
// It stops after -max, whatever it has measured by then.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/clawledger/clawledger"
	"github.com/clawledger/clawledger/internal/searchbench"
	"github.com/clawledger/clawledger/ledger"
	_ "github.com/clawledger/clawledger/sqlite"
)

func main() {
	bin := flag.String("bin", "clawledger", "the clawledger binary")
	dbPath := flag.String("db", "", "ledger")
	state := flag.String("state", "", "a state dir the server refreshes from before each call (default none)")
	n := flag.Int("n", 100, "runs per query")
	mode := flag.String("mode", "", "search mode: lexical, vector or hybrid (default: the ledger's, hybrid once vectors exist)")
	maxTime := flag.Duration("max", 10*time.Minute, "stop measuring after this long")
	flag.Parse()
	ctx := context.Background()
	deadline := time.Now().Add(*maxTime)

	home, err := os.MkdirTemp("", "benchmcp-home-") // no OpenClaw state dir is discovered in it
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	args := []string{"--db", *dbPath}
	if *state != "" {
		args = append(args, "--state", *state)
	}
	cmd := exec.Command(*bin, append(args, "mcp")...)
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "benchmcp", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	loc, err := clawledger.ParseLocation(*dbPath)
	if err != nil {
		log.Fatal(err)
	}
	svc := &ledger.Service{Location: loc, Name: "benchmcp"}
	defer svc.Close()

	// the first call of each: what a process keeps (the ledger open, the
	// vector matrix) is set up on it
	first := map[string]any{"query": searchbench.Queries[0].Q}
	req := ledger.SearchDefaults()
	req.Query, req.Mode = searchbench.Queries[0].Q, *mode
	if *mode != "" {
		first["mode"] = *mode
	}
	start := time.Now()
	if _, err := svc.Search(ctx, req); err != nil {
		log.Fatal(err)
	}
	cold := time.Since(start)
	start = time.Now()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: first}); err != nil || res.IsError {
		log.Fatalf("over MCP: %v %v", err, res)
	}
	fmt.Printf("first call: direct %s, MCP %s\n\n", cold.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	fmt.Printf("| class | query | direct p50 | p95 | p99 | MCP p50 | p95 | p99 | MCP / direct (p50) | runs |\n")
	fmt.Printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var all, allDirect []time.Duration
	for _, q := range searchbench.Queries {
		req := ledger.SearchDefaults()
		req.Query, req.Mode = q.Q, *mode
		args := map[string]any{"query": q.Q}
		if *mode != "" {
			args["mode"] = *mode
		}
		var direct, viaMCP []time.Duration
		for i := 0; i < *n+3 && time.Now().Before(deadline); i++ {
			start := time.Now()
			if _, err := svc.Search(ctx, req); err != nil {
				log.Fatalf("%s: %v", q.Q, err)
			}
			d := time.Since(start)
			start = time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: args})
			if err != nil || res.IsError {
				log.Fatalf("%s over MCP: %v %v", q.Q, err, res)
			}

			if i >= 3 { // warm-up runs are not counted
				direct, viaMCP = append(direct, d), append(viaMCP, time.Since(start))
			}
		}
		if len(viaMCP) == 0 {
			break
		}
		all, allDirect = append(all, viaMCP...), append(allDirect, direct...)
		fmt.Printf("| %s | `%s` | %s | %s | %s | %s | %s | %s | %.2fx | %d |\n", q.Class, q.Q, ms(direct, 50), ms(direct, 95), ms(direct, 99),
			ms(viaMCP, 50), ms(viaMCP, 95), ms(viaMCP, 99), float64(pct(viaMCP, 50))/float64(pct(direct, 50)), len(viaMCP))
	}
	if len(all) > 0 {
		fmt.Printf("| all | %d calls | %s | %s | %s | %s | %s | %s | %.2fx | |\n", len(all), ms(allDirect, 50), ms(allDirect, 95), ms(allDirect, 99),
			ms(all, 50), ms(all, 95), ms(all, 99), float64(pct(all, 50))/float64(pct(allDirect, 50)))
	}
	if time.Now().After(deadline) {
		fmt.Printf("\nstopped after %s (-max)\n", *maxTime)
	}
}

func pct(lat []time.Duration, p int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

func ms(lat []time.Duration, p int) string { return fmt.Sprintf("%.2f ms", float64(pct(lat, p))/1e6) }
