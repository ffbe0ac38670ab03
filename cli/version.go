package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// versionInfo is what `voiceapi version` and `voiceapi --version` print: the module
// version, the VCS commit and its date, all from the build information Go embeds.
type versionInfo struct {
	Version  string // module version: v1.2.3, a pseudo-version, or "(devel)"
	Commit   string // VCS revision, or "unknown"
	Modified bool   // built from a work tree with uncommitted changes
	Date     string // the commit's time (Go records no clock time: builds stay reproducible), or "unknown"
	Go       string // toolchain, OS and architecture
}

// pseudoVersion matches the time and revision at the end of a Go pseudo-version
// (v0.0.0-20261124204606-05bb5d2abcde, v1.2.4-0.2026…-…, optionally +dirty): what
// `go install …@latest` records of an untagged commit, with no VCS settings beside it.
var pseudoVersion = regexp.MustCompile(`[-.](\d{14})-([0-9a-f]{12})(\+[0-9A-Za-z.-]+)?$`)

// readVersion extracts the version from bi, which may be nil (no build information, as in
// some stripped or foreign builds): every missing part gets a fallback, never an error.
func readVersion(bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: "(devel)", Commit: "unknown", Date: "unknown", Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Date = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	// A module built from the proxy carries no VCS settings: its pseudo-version still
	// names the commit (abbreviated) and its time.
	if m := pseudoVersion.FindStringSubmatch(v.Version); m != nil {
		if v.Commit == "unknown" {
			v.Commit = m[2]
		}
		if t, err := time.Parse("20060102150405", m[1]); err == nil && v.Date == "unknown" {
			v.Date = t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// String is the text both version outputs print, one "name value" line each.
func (v versionInfo) String() string {
	commit := v.Commit
	if v.Modified {
		commit += " (modified)"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "voiceapi %s\n", v.Version)
	fmt.Fprintf(&sb, "commit   %s\n", commit)
	fmt.Fprintf(&sb, "date     %s\n", v.Date)
	fmt.Fprintf(&sb, "go       %s\n", v.Go)
	return sb.String()
}

// currentVersion reads this binary's build information.
func currentVersion() versionInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return readVersion(bi)
}

// NewVersionCommand builds `voiceapi version`.
func NewVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and commit date of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), currentVersion())
			return err
		},
	}
}
