package cli

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/voiceapi/voiceapi/agenttest"
	"github.com/voiceapi/voiceapi/data"
)

// JUnit XML as CI systems read it (Jenkins' junit-10.xsd, which GitLab, GitHub Actions'
// reporters and others follow): testsuites > testsuite > testcase, with failure or error.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitXML is the run as one suite of the agent, a testcase per test and repeat: failed
// criteria as its failure, a repeat that could not run as its error, the transcript as
// its output.
func junitXML(agentName string, run *data.TestRun) ([]byte, error) {
	suite := junitSuite{Name: agentName, Time: seconds(run.StartedAt, run.FinishedAt), Timestamp: run.CreatedAt.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{{"run_id", run.ID}, {"agent_id", run.AgentID}, {"status", run.Status}}}
	if run.Revision != nil {
		suite.Properties = append(suite.Properties, junitProperty{"revision", *run.Revision})
	}
	if run.AgentVersion != nil {
		suite.Properties = append(suite.Properties, junitProperty{"agent_version", fmt.Sprint(*run.AgentVersion)})
	}
	for _, r := range run.Results {
		for _, rep := range r.Repeats {
			c := junitCase{Name: r.Name, Classname: agentName, SystemOut: agenttest.TranscriptText(rep.Transcript)}
			if r.Repeats[len(r.Repeats)-1].Repeat > 1 {
				c.Name = fmt.Sprintf("%s (repeat %d)", r.Name, rep.Repeat)
			}
			start, end := rep.StartedAt, rep.FinishedAt
			c.Time = seconds(&start, &end)
			faults := caseFaults(rep)
			switch rep.Status {
			case data.TestError:
				c.Error = &junitProblem{Message: firstLine(faults), Type: "error", Text: strings.Join(faults, "\n")}
				suite.Errors++
			case data.TestFailed:
				c.Failure = &junitProblem{Message: firstLine(faults), Type: "criteria", Text: strings.Join(faults, "\n")}
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		if len(r.Repeats) == 0 { // never ran: the run ended without it
			suite.Cases = append(suite.Cases, junitCase{Name: r.Name, Classname: agentName, Time: "0",
				Error: &junitProblem{Message: "the test did not run", Type: "error"}})
			suite.Errors++
		}
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: "voiceapi", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Time: suite.Time, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}

// seconds is the time from start to end in seconds, "0" when either is unknown.
func seconds(start, end *data.Time) string {
	if start == nil || end == nil {
		return "0"
	}
	return fmt.Sprintf("%.3f", end.Sub(start.Time).Seconds())
}
