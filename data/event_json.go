package data

import "strconv"

// AppendJSON appends e as json.Marshal encodes it, without its hash member when withHash
// is false (what the audit chain's link covers), to dst.
//
// e.Data goes in as it is: encoding/json would scan and compact it again, the size of
// the record it carries, twice a write (the link and the stored event). It must be what
// json.Marshal gives (compact, HTML escaped), as every payload the service records is;
// empty is null.
func (e *Event) AppendJSON(dst []byte, withHash bool) []byte {
	dst = appendString(appendKey(dst, '{', "id"), e.ID)
	dst = appendString(appendKey(dst, ',', "type"), e.Type)
	dst = e.CreatedAt.appendJSON(appendKey(dst, ',', "created_at"))
	dst = appendString(appendKey(dst, ',', "workspace_id"), e.WorkspaceID)
	dst = e.Actor.appendJSON(appendKey(dst, ',', "actor"))
	dst = appendKey(dst, ',', "data")
	if len(e.Data) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, e.Data...)
	}
	dst = appendString(appendKey(dst, ',', "prev_hash"), e.PrevHash)
	if withHash {
		dst = appendString(appendKey(dst, ',', "hash"), e.Hash)
	}
	return append(dst, '}')
}

func (a *Actor) appendJSON(dst []byte) []byte {
	dst = appendString(appendKey(dst, '{', "type"), a.Type)
	if a.UserID != "" {
		dst = appendString(appendKey(dst, ',', "user_id"), a.UserID)
	}
	if a.TokenID != 0 {
		dst = strconv.AppendInt(appendKey(dst, ',', "token_id"), a.TokenID, 10)
	}
	if a.Address != "" {
		dst = appendString(appendKey(dst, ',', "address"), a.Address)
	}
	return append(dst, '}')
}
