package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/voiceapi/voiceapi/internal/fakeagents"
)

// measureUpdates sends o.updates full-body updates to each system, spread round-robin
// over the records the creates made (a new name each time, so every update writes), and
// measures both directories again with the servers stopped.
func measureUpdates(o options, s *sizes) error {
	s.updates = o.updates
	srv, err := startServer(o.bin, s.vDir, os.DevNull)
	if err != nil {
		return err
	}
	logf("voiceapi: %d updates", o.updates)
	c := &client{base: srv.url(), token: s.vToken, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.seeders}}}
	body := string(mustJSON(fakeagents.Body(nameMark, o.tools)))
	err = parallel(o.updates, o.seeders, func(i int) error {
		b := strings.Replace(body, nameMark, fmt.Sprintf("Agent u%d", i), 1)
		_, err := c.do("PUT", "/api/v1/agents/"+s.vAgents[i%len(s.vAgents)], []byte(b), http.StatusOK)
		return err
	})
	srv.stop()
	if err != nil {
		return err
	}
	if s.vUpdated, err = voiceapiStats(o.bin, s.vDir); err != nil {
		return err
	}
	table, err := exec.Command(o.bin, "stats", "--data", s.vDir).Output()
	if err != nil {
		return err
	}
	s.vTable += "\nafter the updates:\n" + string(table)

	pb, err := startPocketBase(o.pocketbase, s.pbDir)
	if err != nil {
		return err
	}
	logf("pocketbase: %d updates", o.updates)
	pc := pb.client()
	pBody := string(mustJSON(pbBody(nameMark, o.tools)))
	err = parallel(o.updates, o.seeders, func(i int) error {
		b := strings.Replace(pBody, nameMark, fmt.Sprintf("Agent u%d", i), 1)
		_, err := pc.do("PATCH", pbRecords+"/"+s.pbIDs[i%len(s.pbIDs)], []byte(b), http.StatusOK)
		return err
	})
	pb.stop()
	if err != nil {
		return err
	}
	s.pbUpdated = pbSize(s.pbDir)
	return nil
}

// printUpdatedSizes prints the files after the creates and the updates (nothing without
// -updates).
func printUpdatedSizes(s *sizes) {
	if s.vUpdated == nil {
		return
	}
	fmt.Printf("\ndatabase after %d creates and %d full-body updates, servers stopped:\n", s.records, s.updates)
	fmt.Printf("  voiceapi (voiceapi.db): %d bytes (%.1f MB; %d of them in free pages)\n", s.vUpdated.FileSize, float64(s.vUpdated.FileSize)/1e6, s.vUpdated.FreeBytes)
	fmt.Printf("  pocketbase (data.db):   %d bytes (%.1f MB)\n", s.pbUpdated, float64(s.pbUpdated)/1e6)
	fmt.Printf("voiceapi / PocketBase: %.2fx (goal ≤ 2x)\n", float64(s.vUpdated.FileSize)/float64(max(1, s.pbUpdated)))
}
