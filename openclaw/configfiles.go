package openclaw

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/clawledger/clawledger"
)

// Configuration files of a state dir.
const (
	ConfigFileName        = "openclaw.json"
	ExecApprovalsFileName = "exec-approvals.json"
	// ConfigBackups is how many rotated backups OpenClaw keeps:
	// openclaw.json.bak, then .bak.1 to .bak.4.
	ConfigBackups = 5
)

// ConfigRingNames lists the copies of openclaw.json oldest first:
// openclaw.json.bak.4 ... .bak.1, .bak, then openclaw.json itself.
func ConfigRingNames() []string {
	names := make([]string, 0, ConfigBackups+1)
	for i := ConfigBackups - 1; i >= 1; i-- {
		names = append(names, ConfigFileName+".bak."+strconv.Itoa(i))
	}
	return append(names, ConfigFileName+".bak", ConfigFileName)
}

// ConfigFile masks one copy of a configuration file into what the store
// records: stream is the file whose versions succeed each other, source
// where this copy was read.
func (m Masker) ConfigFile(kind clawledger.ConfigKind, stream, source string, mtimeMs int64, data []byte) (clawledger.ConfigFile, error) {
	f := clawledger.ConfigFile{Kind: kind, Stream: stream, Source: source, MtimeMs: mtimeMs}
	var mc *MaskedConfig
	var err error
	if kind == clawledger.ConfigExecApprovals {
		var ea *clawledger.ExecApprovals
		if ea, mc, err = m.ExecApprovals(data); err == nil {
			f.Approvals = ea.Allowlist
		}
	} else {
		mc, err = m.Config(data)
	}
	if err != nil {
		return f, err
	}
	f.RawKey, f.Hash, f.Content = mc.RawKey, mc.Hash, mc.Content
	return f, nil
}

// ReadConfigRing reads openclaw.json and its rotated backups from a state
// dir, oldest first, masked. Missing copies are skipped; a copy that cannot
// be read or decoded is reported in errs and left out.
func ReadConfigRing(fsys FS, dir string, m Masker) (ring []clawledger.ConfigFile, errs []error) {
	for _, name := range ConfigRingNames() {
		f, err := readConfigFile(fsys, dir, name, ConfigFileName, clawledger.ConfigOpenClaw, m)
		if err != nil {
			errs = append(errs, err)
		} else if f != nil {
			ring = append(ring, *f)
		}
	}
	return ring, errs
}

// ReadExecApprovals reads a state dir's exec-approvals.json, masked (nil
// when there is none).
func ReadExecApprovals(fsys FS, dir string, m Masker) (*clawledger.ConfigFile, error) {
	return readConfigFile(fsys, dir, ExecApprovalsFileName, ExecApprovalsFileName, clawledger.ConfigExecApprovals, m)
}

func readConfigFile(fsys FS, dir, name, stream string, kind clawledger.ConfigKind, m Masker) (*clawledger.ConfigFile, error) {
	data, mtime, err := readSmall(fsys, filepath.Join(dir, name), MaxConfigBytes)
	if err != nil || data == nil {
		return nil, err
	}
	f, err := m.ConfigFile(kind, stream, name, mtime, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

// readSmall reads a regular file of at most max bytes and its mtime (epoch
// ms); a missing file is (nil, 0, nil).
func readSmall(fsys FS, path string, max int64) ([]byte, int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > max {
		return nil, 0, fmt.Errorf("%s: %d bytes, more than %d", path, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(data)) > max {
		return nil, 0, fmt.Errorf("%s: more than %d bytes", path, max)
	}
	return data, fi.ModTime().UnixMilli(), nil
}
