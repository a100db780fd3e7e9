package web

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// tokenBytes is the entropy of a generated token.
const tokenBytes = 32

// LoadToken returns the access token kept in path, generating and storing
// one (mode 0600, its directory 0700) when the file does not exist;
// created says it did, so that the caller prints it once. A token file
// others may read or write is refused, as is one that holds no usable
// token: a server must never run beyond loopback on a token it cannot
// trust.
func LoadToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		token, err = generateToken(path)
		return token, err == nil, err
	case err != nil:
		return "", false, fmt.Errorf("token file: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("token file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", false, fmt.Errorf("token file %s is open to other users (mode %04o): make it 0600 (chmod 600) or remove it to have a new token made", path, perm)
	}
	token = strings.TrimSpace(string(b))
	if len(token) < 32 || strings.ContainsFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", false, fmt.Errorf("token file %s holds no usable token (32 or more printable characters): remove it to have a new one made", path)
	}
	return token, false, nil
}

func generateToken(path string) (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("token file: %w", err)
	}
	return token, nil
}

// Loopback reports whether a listen address (host:port) is reachable from
// this machine only: a loopback IP, or localhost. An empty host (":7700")
// listens on every interface, and a name other than localhost may resolve
// to anything: neither is loopback.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
