package validate

// Numeric bounds of the agent configuration groups (the spec's tables). The rules below
// and the OpenAPI document (openapi/rules.go) read these: each bound is written
// once.
const (
	MinMaxCallDurationMS, MaxMaxCallDurationMS = 60_000, 7_200_000
	MinRingDurationMS, MaxRingDurationMS       = 5_000, 300_000
	MinAISpeakWaitTime, MaxAISpeakWaitTime     = 0, 5
	MinStreamingLatency, MaxStreamingLatency   = 0, 4
	MinSpeedAlpha, MaxSpeedAlpha               = 0.1, 5
	MinTemperature, MaxTemperature             = 0, 1
	MinPauseDetectionMS, MaxPauseDetectionMS   = 1000, 6000
)
