package bolt

import (
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestDeflateDictIsFrozen: every value written with markDeflateDict1 inflates only with
// these exact bytes. Changing the dictionary makes those values unreadable: a new
// dictionary needs a new mark, and this one stays.
func TestDeflateDictIsFrozen(t *testing.T) {
	const want = "d347aa36531cafd98a2ef7501e581ddc40f58b84c9d8f8f041df8e97c13f5f37"
	sum := sha256.Sum256(deflateDictV1)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("deflate_dict_v1.json has sha256 %s, want %s: values already stored need the original", got, want)
	}
}

// TestStoredValueFormats: values written by every earlier format read back (plain JSON,
// deflated without a dictionary), and a new value shrinks against the dictionary more
// than it would without it.
func TestStoredValueFormats(t *testing.T) {
	call, err := os.ReadFile("testdata/call.json")
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	plain.WriteByte(markDeflate)
	w, _ := flate.NewWriter(&plain, flate.BestSpeed)
	w.Write(call)
	w.Close()
	for name, stored := range map[string][]byte{"plain": call, "deflated without a dictionary": plain.Bytes(), "current": encodeValue(call)} {
		back, err := decodeValue(stored)
		if err != nil || !bytes.Equal(back, call) {
			t.Errorf("%s: read back %q, %v", name, back, err)
		}
		var v map[string]any
		if err := jsonUnmarshal(stored, &v); err != nil || v["id"] != "call_01M88077HYC5Y3Y3CX9G4KDBS4" {
			t.Errorf("%s: decoded %v, %v", name, v["id"], err)
		}
	}
	now := encodeValue(call)
	if now[0] != markDeflateDict1 || len(now) >= plain.Len() {
		t.Errorf("a %d-byte call stored in %d bytes (mark %#x); %d without the dictionary", len(call), len(now), now[0], plain.Len())
	}
	if _, err := decodeValue([]byte{markDeflateDict1, 0xff, 0x00}); err == nil {
		t.Error("a corrupt value decoded")
	}
}
