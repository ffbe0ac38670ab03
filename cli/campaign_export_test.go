package cli

import "io"

// FakeTerminal is standard error claiming to be a terminal, for the tests of package
// cli_test (which run on either engine) to see the progress bars.
type FakeTerminal = fakeTerminal

// TerminalInput is standard input claiming to be a terminal someone answers on.
type TerminalInput struct{ io.Reader }

func (TerminalInput) isTerminal() bool { return true }
