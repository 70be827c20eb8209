package plugin

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
)

// This file keeps what the estimator learned across restarts, upgrades and leader
// failovers: a checkpoint of it (finegrain.Scheduler.SaveEstimates, the predict
// package's versioned, schema-checked encoding), gzip-compressed, in a ConfigMap of
// the profile's own, written every Args.CheckpointInterval by the replica that
// schedules and once more when it stops, and restored when a replica starts to
// schedule. A failover loses at most what was learned in one interval.
//
// A ConfigMap rather than a resource of the plugin's own: it needs no
// CustomResourceDefinition installed before the scheduler can start, its RBAC can be
// limited to one name, and one blob a profile is what is written — VPA's
// VerticalPodAutoscalerCheckpoint holds one object per container because its
// recommender checkpoints each container's histograms apart; the estimator is one
// state. Its limit is the API's: an object of at most 1 MiB, so a checkpoint larger
// than CheckpointMaxBytes compressed is not written (checkpoints_total{result=
// "too_large"}, and an error logged): bound the keys the estimator holds instead.

// The ConfigMap's contents.
const (
	// CheckpointKey is the binaryData key holding the gzip-compressed checkpoint.
	CheckpointKey = "estimates.json.gz"
	// CheckpointWrittenAnnotation is when the checkpoint was written (RFC 3339).
	CheckpointWrittenAnnotation = "finegrain.io/checkpoint-written"
	// CheckpointKeysAnnotation is how many keys the estimator held then.
	CheckpointKeysAnnotation = "finegrain.io/checkpoint-keys"
	// CheckpointMaxBytes is the largest compressed checkpoint written: the API
	// refuses an object of more than 1 MiB, and the ConfigMap's metadata needs room.
	CheckpointMaxBytes = 1000 << 10
	// checkpointMaxInflated bounds what a restore inflates: a corrupt or hostile
	// ConfigMap must not make the scheduler allocate without limit.
	checkpointMaxInflated = 256 << 20
	// checkpointTimeout bounds one API call of the checkpoints.
	checkpointTimeout = 10 * time.Second
)

// errCheckpointTooLarge is a checkpoint beyond CheckpointMaxBytes.
var errCheckpointTooLarge = errors.New("checkpoint too large for a ConfigMap")

// checkpointName is the ConfigMap's name for the profile: Args.CheckpointName, or
// finegrain-estimates-PROFILE.
func (p *Plugin) checkpointName() string {
	if p.args.CheckpointName != "" {
		return p.args.CheckpointName
	}
	return "finegrain-estimates-" + p.profile
}

// writeCheckpoint saves the estimator's state to the profile's ConfigMap, creating it
// the first time.
func (p *Plugin) writeCheckpoint(ctx context.Context) (err error) {
	defer func() {
		result := "ok"
		switch {
		case errors.Is(err, errCheckpointTooLarge):
			result = "too_large"
		case err != nil:
			result = "failed"
		}
		metricCheckpoints.WithLabelValues(p.profile, "write", result).Inc()
	}()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := p.sched.SaveEstimates(zw); err != nil {
		return fmt.Errorf("save the estimates: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress the estimates: %w", err)
	}
	if buf.Len() > CheckpointMaxBytes {
		return fmt.Errorf("%w: %d bytes compressed, at most %d", errCheckpointTooLarge, buf.Len(), CheckpointMaxBytes)
	}
	keys, _ := p.estimatorKeys()
	cm := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      p.checkpointName(),
			Namespace: p.args.CheckpointNamespace,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "finegrain-scheduler"},
			Annotations: map[string]string{
				CheckpointWrittenAnnotation: p.clock.Now().UTC().Format(time.RFC3339),
				CheckpointKeysAnnotation:    strconv.Itoa(keys),
			},
		},
		BinaryData: map[string][]byte{CheckpointKey: buf.Bytes()},
	}
	ctx, cancel := context.WithTimeout(ctx, checkpointTimeout)
	defer cancel()
	cms := p.handle.ClientSet().CoreV1().ConfigMaps(cm.Namespace)
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("write ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	metricCheckpointBytes.WithLabelValues(p.profile).Set(float64(buf.Len()))
	return nil
}

// restoreCheckpoint restores the estimator from the profile's ConfigMap. None is no
// error: the estimator starts empty. A checkpoint that cannot be read, is corrupt or
// is of another schema (other extended resources) is refused with an error that says
// why; the estimator then starts empty as well — the scheduler schedules on requests
// and learns again rather than crash-looping on a bad object.
func (p *Plugin) restoreCheckpoint(ctx context.Context) (restored bool, err error) {
	result := "ok"
	defer func() {
		metricCheckpoints.WithLabelValues(p.profile, "restore", result).Inc()
	}()
	ctx, cancel := context.WithTimeout(ctx, checkpointTimeout)
	defer cancel()
	ns, name := p.args.CheckpointNamespace, p.checkpointName()
	cm, err := p.handle.ClientSet().CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		result = "none"
		return false, nil
	case err != nil:
		result = "failed"
		return false, fmt.Errorf("read ConfigMap %s/%s: %w", ns, name, err)
	}
	data, ok := cm.BinaryData[CheckpointKey]
	if !ok {
		result = "refused"
		return false, fmt.Errorf("ConfigMap %s/%s holds no %s", ns, name, CheckpointKey)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		result = "refused"
		return false, fmt.Errorf("ConfigMap %s/%s: %s is not gzip-compressed: %w", ns, name, CheckpointKey, err)
	}
	if err := p.sched.RestoreEstimates(&limitedReader{r: zr, left: checkpointMaxInflated}); err != nil {
		result = "refused"
		return false, fmt.Errorf("ConfigMap %s/%s: %w", ns, name, err)
	}
	p.keysLearned()
	return true, nil
}

// Close implements io.Closer, which kube-scheduler calls on its plugins when it stops
// scheduling (its context ends: a rolling upgrade, a drained node, SIGTERM), before it
// exits: the replica that scheduled writes a last checkpoint, so that its successor
// starts from what it learned up to then. A standby, which never scheduled, writes
// nothing. The write waits at most 10 s for the API.
func (p *Plugin) Close() error {
	if !p.active.Load() || p.args.CheckpointInterval.Duration <= 0 || p.handle == nil || p.handle.ClientSet() == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkpointTimeout)
	defer cancel()
	if err := p.writeCheckpoint(ctx); err != nil {
		return fmt.Errorf("%s: last checkpoint of the estimates: %w", Name, err)
	}
	return nil
}

// limitedReader is io.LimitReader that fails, rather than ending, past its limit: a
// checkpoint cut short at the limit would be refused as truncated, which would hide
// the reason.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(b []byte) (int, error) {
	if l.left <= 0 {
		return 0, fmt.Errorf("checkpoint inflates to more than %d bytes", checkpointMaxInflated)
	}
	if int64(len(b)) > l.left {
		b = b[:l.left]
	}
	n, err := l.r.Read(b)
	l.left -= int64(n)
	return n, err
}

// checkpoints writes a checkpoint at every tick of t (every Args.CheckpointInterval)
// until ctx ends (Close writes the last one).
func (p *Plugin) checkpoints(ctx context.Context, t clock.Ticker) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := p.writeCheckpoint(ctx); err != nil && ctx.Err() == nil {
				p.logger.Error(err, "checkpoint of the estimates")
			}
		}
	}
}
