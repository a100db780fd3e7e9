package mcpserver

import (
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where the Streamable HTTP endpoint is served.
const HTTPPath = "/mcp"

// HTTPHandler serves srv as Streamable HTTP at HTTPPath, for a listener on
// loopback: the SDK refuses a request arriving on loopback that names
// another host (DNS rebinding), and browsers' cross-origin requests are
// refused. Idle sessions end after half an hour.
func HTTPHandler(srv *mcp.Server) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, http.NewCrossOriginProtection().Handler(h))
	return mux
}
