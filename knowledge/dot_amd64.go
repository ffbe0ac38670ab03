//go:build !purego

package knowledge

import "golang.org/x/sys/cpu"

// dotAVX2 is dot with AVX2 and FMA instructions (dot_amd64.s); len(b) must be at least
// len(a).
//
//go:noescape
func dotAVX2(a, b []float32) float32

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		dotKernel = func(a, b []float32) float32 { return dotAVX2(a, b[:len(a)]) }
	}
}
