// Command voiceapi is a self-hosted control plane for voice AI agents: one binary with an
// embedded database, a REST API under /api/v1 and admin subcommands.
package main

import "github.com/voiceapi/voiceapi/cli"

func main() { cli.Execute() }
