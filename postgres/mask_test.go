package postgres

import "testing"

// A long password is masked wherever it appears; a short one only where a
// connection string spells it, so a message stays readable.
func TestMaskPassword(t *testing.T) {
	for _, c := range []struct{ msg, pw, want string }{
		{"postgres://cr:r@h/db: ERROR: permission denied for table hosts", "r",
			"postgres://cr:xxxxx@h/db: ERROR: permission denied for table hosts"},
		{"cannot parse `host=h password=r dbname=x`: bad", "r", "cannot parse `host=h password=xxxxx dbname=x`: bad"},
		{"postgres://a:p%40q@h/db failed", "p@q", "postgres://a:xxxxx@h/db failed"},
		{"the server echoed s3cr3t-pw back", "s3cr3t-pw", "the server echoed xxxxx back"},
		{"no password here", "", "no password here"},
	} {
		if got := maskPassword(c.msg, c.pw); got != c.want {
			t.Errorf("maskPassword(%q, %q) = %q, want %q", c.msg, c.pw, got, c.want)
		}
	}
}
