//go:build unix

package agentdb

import "syscall"

// oNoFollow makes an open fail on a symlink.
const oNoFollow = syscall.O_NOFOLLOW
