package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want versionInfo
	}{
		{"no build information", nil,
			versionInfo{Version: "(devel)", Commit: "unknown", Date: "unknown", Go: runtime.Version() + platform}},
		{"go run or go test: no version, no VCS", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			versionInfo{Version: "(devel)", Commit: "unknown", Date: "unknown", Go: "go1.26.8" + platform}},
		{"empty main version", &debug.BuildInfo{GoVersion: "go1.26.8"},
			versionInfo{Version: "(devel)", Commit: "unknown", Date: "unknown", Go: "go1.26.8" + platform}},
		{"go build in a clone with local changes",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261124204854-950b8ece5de0+dirty"},
				Settings: vcs("vcs", "git", "vcs.revision", "950b8ece5de0618121a4cf4d3d2d896d1a7d3a05", "vcs.time", "2026-11-24T20:48:54Z", "vcs.modified", "true")},
			versionInfo{Version: "v0.0.0-20261124204854-950b8ece5de0+dirty", Commit: "950b8ece5de0618121a4cf4d3d2d896d1a7d3a05", Modified: true, Date: "2026-11-24T20:48:54Z", Go: "go1.26.8" + platform}},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			versionInfo{Version: "v1.4.0", Commit: "unknown", Date: "unknown", Go: "go1.26.8" + platform}},
		{"go install @latest of an untagged commit: the pseudo-version names it",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261124204854-950b8ece5de0"}},
			versionInfo{Version: "v0.0.0-20261124204854-950b8ece5de0", Commit: "950b8ece5de0", Date: "2026-11-24T20:48:54Z", Go: "go1.26.8" + platform}},
		{"pseudo-version after a pre-release tag",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.5.0-rc.1.0.20261124204854-950b8ece5de0"}},
			versionInfo{Version: "v1.5.0-rc.1.0.20261124204854-950b8ece5de0", Commit: "950b8ece5de0", Date: "2026-11-24T20:48:54Z", Go: "go1.26.8" + platform}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := readVersion(tc.bi); got != tc.want {
				t.Errorf("readVersion:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	modified := versionInfo{Version: "v1.4.0", Commit: "abc", Modified: true, Date: "2026-01-02T03:04:05Z", Go: "go1.26.8 linux/amd64"}.String()
	want := "voiceapi v1.4.0\ncommit   abc (modified)\ndate     2026-01-02T03:04:05Z\ngo       go1.26.8 linux/amd64\n"
	if modified != want {
		t.Errorf("String:\n%s\nwant\n%s", modified, want)
	}
}

// TestVersionCommandAndFlag: `voiceapi version` and `voiceapi --version` print the same
// four lines, from this binary's build information. A test binary has no VCS stamp, so
// the fallbacks show.
func TestVersionCommandAndFlag(t *testing.T) {
	bi, _ := debug.ReadBuildInfo()
	want := readVersion(bi).String()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, err := run(t, "", args...)
		if err != nil || errOut != "" {
			t.Fatalf("%v: %v, stderr %q", args, err, errOut)
		}
		if out != want {
			t.Errorf("%v printed\n%s\nwant\n%s", args, out, want)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "voiceapi ") || !strings.HasPrefix(lines[1], "commit ") ||
			!strings.HasPrefix(lines[2], "date ") || !strings.Contains(lines[3], runtime.GOOS+"/"+runtime.GOARCH) {
			t.Errorf("%v: unexpected shape:\n%s", args, out)
		}
		if !strings.Contains(out, "commit   unknown") || !strings.Contains(out, "date     unknown") {
			t.Errorf("%v: a test binary carries no VCS stamp, want the fallbacks:\n%s", args, out)
		}
	}
	if _, _, err := run(t, "", "version", "extra"); err == nil {
		t.Error("version accepted an argument")
	}
}
