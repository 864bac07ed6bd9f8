package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/toolsmith/toolsmith/graph"
	"github.com/toolsmith/toolsmith/internal/fault"
)

var _ graph.Notices = (*Store)(nil)

// Notices by topic (graph.Notices):
//
//	(:Notice {topic, seq, at, data})
//	(:ToolsmithMeta {key: 'noticeSeq:<topic>', n})             the topic's last seq
//	(:ToolsmithMeta {key: 'noticeImport:<source>', at, notices}) an imported notifications file
//	(:ToolsmithMeta {key: 'span:<name>', at, claims})          a ClaimSpan mark
//
// A post bumps its topic's counter node, a SET that reads the property it
// writes, so the node is write-locked until the post commits: seqs are
// handed out in the order the posts commit, and a reader that has seen seq
// n never finds a smaller one committed later. ClaimSpan locks its mark the
// same way before reading it.
const (
	cypherIndexNoticeTopic = `CREATE INDEX notice_topic_seq IF NOT EXISTS FOR (n:Notice) ON (n.topic, n.seq)`
	cypherNoticeSeq        = `MERGE (m:ToolsmithMeta {key: $key})
ON CREATE SET m.n = 0
SET m.n = m.n + $count
RETURN m.n AS last`
	cypherInsertNotices = `UNWIND $notices AS x
CREATE (:Notice {topic: x.topic, seq: x.seq, at: x.at, data: x.data})`
	cypherTrimNotices = `MATCH (n:Notice {topic: $topic})
WITH n ORDER BY n.seq DESC
SKIP $keep
DELETE n`
	cypherLatestNotices = `MATCH (n:Notice {topic: $topic})
RETURN n.seq AS seq, n.at AS at, n.data AS data
ORDER BY n.seq DESC
LIMIT $limit`
	cypherNoticesAfter = `MATCH (n:Notice {topic: $topic})
WHERE n.seq > $after
RETURN n.seq AS seq, n.at AS at, n.data AS data
ORDER BY n.seq
LIMIT $limit`
	cypherNoticeImport = `MERGE (m:ToolsmithMeta {key: $key})
ON CREATE SET m.at = $now, m.notices = $count, m.fresh = true
ON MATCH SET m.fresh = false
RETURN m.fresh AS fresh`
	cypherClaimSpan = `MERGE (m:ToolsmithMeta {key: $key})
ON CREATE SET m.claims = 0
SET m.claims = m.claims + 1
WITH m, m.at AS prev
SET m.at = CASE WHEN prev IS NULL OR prev < $until THEN $until ELSE prev END
RETURN prev, prev IS NULL OR prev < $until AS claimed`
)

// PostNotice implements graph.Notices.
func (s *Store) PostNotice(ctx context.Context, n graph.Notice, keep int) (graph.Notice, error) {
	if err := graph.ValidateNotice(n); err != nil {
		return n, fmt.Errorf("neo4j: post notice: %w", err)
	}
	err := s.r.write(ctx, func(tx txRunner) error {
		stored, err := s.insertNotices(ctx, tx, []graph.Notice{n}, keep)
		if err == nil {
			n = stored[0]
		}
		return err
	})
	if err != nil {
		return n, wrapErr("post notice", err)
	}
	return n, nil
}

// insertNotices stores ns (each of one topic at a time, in order) with
// their topics' next seqs and trims each topic to keep.
func (s *Store) insertNotices(ctx context.Context, tx txRunner, ns []graph.Notice, keep int) ([]graph.Notice, error) {
	out := make([]graph.Notice, 0, len(ns))
	for i := 0; i < len(ns); {
		topic := ns[i].Topic
		j := i
		for j < len(ns) && ns[j].Topic == topic {
			j++
		}
		got, err := tx.run(ctx, cypherNoticeSeq, map[string]any{"key": "noticeSeq:" + topic, "count": int64(j - i)})
		if err != nil {
			return nil, err
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("no notice seq returned")
		}
		last, err := getInt(got[0], "last")
		if err != nil {
			return nil, err
		}
		rows := make([]any, 0, j-i)
		for k, n := range ns[i:j] {
			n.Seq = last - int64(j-i) + int64(k) + 1
			if n.At.IsZero() {
				n.At = s.clock()
			}
			n.At = n.At.UTC()
			out = append(out, n)
			rows = append(rows, map[string]any{"topic": n.Topic, "seq": n.Seq, "at": n.At.UnixNano(), "data": string(n.Data)})
		}
		if _, err := tx.run(ctx, cypherInsertNotices, map[string]any{"notices": rows}); err != nil {
			return nil, err
		}
		if _, err := tx.run(ctx, cypherTrimNotices, map[string]any{"topic": topic, "keep": int64(graph.NoticeKeep(keep))}); err != nil {
			return nil, err
		}
		i = j
	}
	return out, nil
}

// ImportNotices implements graph.Notices.
func (s *Store) ImportNotices(ctx context.Context, source string, ns []graph.Notice, keep int) (bool, error) {
	if source == "" {
		return false, fmt.Errorf("neo4j: import notices: source is required: %w", fault.ErrInvalid)
	}
	for i, n := range ns {
		if err := graph.ValidateNotice(n); err != nil {
			return false, fmt.Errorf("neo4j: import notices: notice %d: %w", i, err)
		}
	}
	return s.importOnce(ctx, "import notices", cypherNoticeImport, "noticeImport:"+source, len(ns), func(tx txRunner) error {
		_, err := s.insertNotices(ctx, tx, ns, keep)
		return err
	})
}

// LatestNotices implements graph.Notices.
func (s *Store) LatestNotices(ctx context.Context, topic string, limit int) ([]graph.Notice, error) {
	out, err := s.readNotices(ctx, cypherLatestNotices, map[string]any{"topic": topic, "limit": int64(graph.NoticeLimit(limit))}, topic)
	if err != nil {
		return nil, wrapErr("latest notices", err)
	}
	return out, nil
}

// NoticesAfter implements graph.Notices.
func (s *Store) NoticesAfter(ctx context.Context, topic string, after int64, limit int) ([]graph.Notice, error) {
	out, err := s.readNotices(ctx, cypherNoticesAfter, map[string]any{"topic": topic, "after": after, "limit": int64(graph.NoticeLimit(limit))}, topic)
	if err != nil {
		return nil, wrapErr("notices after", err)
	}
	return out, nil
}

func (s *Store) readNotices(ctx context.Context, q string, params map[string]any, topic string) ([]graph.Notice, error) {
	var out []graph.Notice
	err := s.r.read(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, q, params)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, rec := range recs {
			seq, err := getInt(rec, "seq")
			if err != nil {
				return err
			}
			at, err := getInt(rec, "at")
			if err != nil {
				return err
			}
			data, err := getString(rec, "data")
			if err != nil {
				return err
			}
			out = append(out, graph.Notice{Seq: seq, Topic: topic, At: graph.FromNanos(at), Data: []byte(data)})
		}
		return nil
	})
	return out, err
}

// ClaimSpan implements graph.Notices.
func (s *Store) ClaimSpan(ctx context.Context, name string, until time.Time) (time.Time, bool, error) {
	if name == "" {
		return time.Time{}, false, fmt.Errorf("neo4j: claim span: name is required: %w", fault.ErrInvalid)
	}
	var prev time.Time
	claimed := false
	err := s.r.write(ctx, func(tx txRunner) error {
		recs, err := tx.run(ctx, cypherClaimSpan, map[string]any{"key": "span:" + name, "until": until.UnixNano()})
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("no span mark returned")
		}
		prev, claimed = time.Time{}, false
		if recs[0]["prev"] != nil {
			at, err := getInt(recs[0], "prev")
			if err != nil {
				return err
			}
			prev = graph.FromNanos(at)
		}
		claimed, err = getBool(recs[0], "claimed")
		return err
	})
	if err != nil {
		return time.Time{}, false, wrapErr(fmt.Sprintf("claim span %q", name), err)
	}
	return prev, claimed, nil
}
