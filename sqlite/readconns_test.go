package sqlite

import (
	"context"
	"database/sql"
	"testing"
)

// TestReadPool: the read pool lets a server's short reads run beside its
// long ones rather than queue for one of four connections, and keeps its
// connections (their page caches and prepared statements) when idle.
func TestReadPool(t *testing.T) {
	db, _ := openStateDir(t)
	if n := db.r.Stats().MaxOpenConnections; n < 8 {
		t.Errorf("the read pool has %d connections", n)
	}
	// eight reads open at once, on eight connections
	ctx := context.Background()
	var open []*sql.Rows
	for range 8 {
		rows, err := db.r.QueryContext(ctx, "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, rows)
	}
	for _, rows := range open {
		rows.Close()
	}
	if st := db.r.Stats(); st.Idle < 8 || st.MaxIdleClosed > 0 {
		t.Errorf("after eight reads at once: %d connections kept, %d closed", st.Idle, st.MaxIdleClosed)
	}
}
