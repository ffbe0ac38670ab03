//go:build !unix

package knowledge

import (
	"testing"
	"time"
)

// processCPU is 0 where getrusage does not exist: the benchmarks report no CPU time there.
func processCPU(testing.TB) time.Duration { return 0 }
