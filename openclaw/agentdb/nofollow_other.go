//go:build !unix

package agentdb

// oNoFollow: the system has no O_NOFOLLOW.
const oNoFollow = 0
