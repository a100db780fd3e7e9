package clawledger

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// A ledger is found by its location: a file path, or a URL whose scheme
// names the backend that keeps it (sqlite:///var/ledger.db, file:ledger.db,
// postgres://host/db). Each backend registers its schemes from an init
// function (database/sql's drivers, restic's and Litestream's backends
// work the same way), so that a program links the backends it imports and
// names none of them elsewhere.

// Backend opens the ledgers of its schemes.
type Backend interface {
	// Locate checks a location of one of the backend's schemes and fills
	// in what it needs: Path, for a backend that keeps the ledger in a
	// local file. Its errors never show a password the URL holds.
	Locate(loc *Location) error
	// Open opens the ledger at loc. A writer (not opt.ReadOnly) takes the
	// writer lock (see Locker); a ledger that does not exist is created
	// unless opt.ReadOnly or opt.Existing (ErrNoLedger then).
	Open(ctx context.Context, loc Location, opt OpenOptions) (Store, error)
	// Watching reports whether a watch keeps the ledger current, and which
	// (in a ledger of many hosts, loc.Host's watch).
	Watching(ctx context.Context, loc Location) (Holder, bool)
	// LockWatch claims the ledger (loc.Host's part of it) for a watch, waiting up to wait for
	// another watch to stop; it fails with a *LockedError (Watch set)
	// while one runs. Unlock gives the claim up.
	LockWatch(ctx context.Context, loc Location, me Holder, wait time.Duration) (interface{ Unlock() error }, error)
}

// OpenOptions tune Backend.Open.
type OpenOptions struct {
	ReadOnly bool // open an existing ledger for reading only; no migrations
	Existing bool // a writer that needs a ledger to work on: never create one
	// Writer says who this writer is, for a second writer's error message.
	Writer Holder
	// LockWait is how long a writer waits for another writer to finish.
	LockWait time.Duration
	// Host names the machine a writer ingests for, in a ledger that holds
	// many hosts' sources (see Fleet); "" is this machine's hostname. A
	// backend that keeps one machine's ledger ignores it.
	Host string
	// Damaged opens a ledger that may be damaged, for reading only (with
	// ReadOnly), as far as it can be read: damage to its schema does not
	// stop it opening (doctor, a salvage).
	Damaged bool
	// Import says a writer's first work is storing what the state dirs
	// hold (an ingest, a query's refresh). A backend may store it faster
	// into a ledger this Open creates, while other processes' readers
	// wait for its commits, until the writer's EndImport (or Close).
	Import bool
}

// Holder describes the process holding a ledger's lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // what it is doing: "ingest", "watch", ...
	Since   time.Time `json:"since"`
}

// String says who holds a lock, for messages.
func (h Holder) String() string {
	if h.PID == 0 {
		return "another clawledger process"
	}
	return fmt.Sprintf("clawledger %s (pid %d, since %s)", h.Command, h.PID, h.Since.Local().Format(time.DateTime))
}

// LockedError says another process holds a ledger's lock: its writer lock,
// or with Watch its watch lock.
type LockedError struct {
	Ledger string // the ledger's location, for people
	Holder Holder // zero when the holder did not say who it is
	Watch  bool
}

func (e *LockedError) Error() string {
	if e.Watch {
		return fmt.Sprintf("%s is already watching the ledger %s", e.Holder.String(), e.Ledger)
	}
	return fmt.Sprintf("the ledger %s is being written by %s", e.Ledger, e.Holder.String())
}

// ErrorCode makes a LockedError a conflict.
func (e *LockedError) ErrorCode() string { return ECONFLICT }

// Location is where a ledger is.
type Location struct {
	Scheme string   // lowercase; "file" for a plain path
	Path   string   // the absolute path of a ledger kept in a local file, else ""
	URL    *url.URL // the URL as given; nil for a plain path
	// Host names the machine this process writes for in a ledger that
	// holds many hosts' sources (see Fleet): its writers' host when
	// OpenOptions.Host is "", and the host whose watch Watching and
	// LockWatch mean. "" is this machine's hostname; a backend that keeps
	// one machine's ledger ignores it.
	Host string
	// backend is the backend registered for Scheme.
	backend Backend
}

// String is the location for people: its path, or its URL with every
// password masked.
func (l Location) String() string {
	if l.URL == nil {
		return l.Path
	}
	return RedactURL(l.URL)
}

// Open opens the ledger at l with the backend of its scheme.
func (l Location) Open(ctx context.Context, opt OpenOptions) (Store, error) {
	return l.backend.Open(ctx, l, opt)
}

// Watching reports whether a watch keeps the ledger at l current, and which.
func (l Location) Watching(ctx context.Context) (Holder, bool) { return l.backend.Watching(ctx, l) }

// LockWatch claims the ledger at l for a watch (see Backend.LockWatch).
func (l Location) LockWatch(ctx context.Context, me Holder, wait time.Duration) (interface{ Unlock() error }, error) {
	return l.backend.LockWatch(ctx, l, me, wait)
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// RegisterBackend makes a backend open the ledgers of a URL scheme. It is
// meant for init functions, and panics when the scheme is taken.
func RegisterBackend(scheme string, b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	scheme = strings.ToLower(scheme)
	if _, dup := backends[scheme]; dup || b == nil {
		panic("clawledger: RegisterBackend twice or with nil for scheme " + scheme)
	}
	backends[scheme] = b
}

// Schemes lists the registered schemes, sorted.
func Schemes() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	out := make([]string, 0, len(backends))
	for s := range backends {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// ErrUnknownScheme is the reason of a location whose scheme no backend of
// this build registered.
var ErrUnknownScheme = &Error{Code: EINVALID, Message: "no backend for this scheme"}

// scheme matches a URL's scheme; one letter is a Windows drive (C:\...).
var scheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+):`)

// ParseLocation reads a ledger location: a path, or a URL whose scheme a
// backend registered. It touches no file, and its errors (EINVALID) show
// the location with every password masked.
func ParseLocation(s string) (Location, error) {
	if s == "" {
		return Location{}, Errorf(EINVALID, "no ledger location given")
	}
	loc := Location{Scheme: "file", Path: s}
	if m := scheme.FindStringSubmatch(s); m != nil {
		u, err := url.Parse(s)
		if err != nil {
			return Location{}, Errorf(EINVALID, "%s: not a URL", redactRaw(s))
		}
		loc = Location{Scheme: strings.ToLower(u.Scheme), URL: u}
	}
	backendsMu.RLock()
	loc.backend = backends[loc.Scheme]
	backendsMu.RUnlock()
	if loc.backend == nil {
		return Location{}, Reasonf(EINVALID, ErrUnknownScheme, "%s: no ledger backend for the %q scheme (this clawledger knows %s, or a file path)",
			loc, loc.Scheme, strings.Join(Schemes(), ", "))
	}
	if err := loc.backend.Locate(&loc); err != nil {
		return Location{}, err
	}
	return loc, nil
}

// RedactURL renders u with every password masked: the user info's and
// query parameters that carry secrets (password=, sslpassword=, ...).
// The mask is url.URL.Redacted's "xxxxx", never a redaction label: a
// password must not read as anything but a hidden password.
func RedactURL(u *url.URL) string {
	c := *u
	if q := c.Query(); len(q) > 0 {
		masked := false
		for k := range q {
			if secretParam(k) {
				q[k] = []string{"xxxxx"}
				masked = true
			}
		}
		if masked {
			c.RawQuery = q.Encode()
		}
	}
	return c.Redacted()
}

func secretParam(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"pass", "secret", "token", "key"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// userinfo finds the password of a URL that does not parse.
var userinfo = regexp.MustCompile(`^([^:/?#]+://[^:/?#@]*):[^/?#]*@`)

// redactRaw masks the password of a location that is not a valid URL (and
// any query, which may hold one).
func redactRaw(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}:xxxxx@")
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + "?xxxxx"
	}
	return s
}
