/**
 * The @grpc/grpc-js channel settings of a CRI client.
 *
 * @module
 */
import type { ChannelOptions } from '@grpc/grpc-js';
import type { CriEndpoint } from './endpoint.js';

/** Inputs of {@link criChannelOptions}. */
export interface CriChannelSettings {
  /** Largest message sent or received, bytes. */
  readonly maxMessageBytes: number;
  /** First reconnect delay after the runtime went away, ms. */
  readonly reconnectBackoffInitialMs: number;
  /** Longest reconnect delay, ms: bounds how long recovery takes once the runtime is back. */
  readonly reconnectBackoffMaxMs: number;
}

/**
 * Channel options for an endpoint.
 *
 * - Message size: the kubelet raises gRPC's 4 MiB default to 16 MiB both ways; big nodes'
 *   list responses need it.
 * - Reconnect backoff: grpc-js's default grows to 120 s, which would leave a client failing
 *   with UNAVAILABLE for up to two minutes after a runtime restart; a local runtime is cheap
 *   to re-dial, so the cap is seconds.
 * - Keepalive: off for unix sockets (a dead peer shows up at once as EOF/ECONNRESET, and
 *   pings only risk the server's too_many_pings GOAWAY). For TCP, a ping every 5 minutes
 *   (grpc-go servers' default minimum) with a 20 s timeout finds half-open connections.
 * - A local subchannel pool, so `close()` really closes this client's connection.
 */
export function criChannelOptions(endpoint: CriEndpoint, settings: CriChannelSettings): ChannelOptions {
  const options: ChannelOptions = {
    'grpc.max_receive_message_length': settings.maxMessageBytes,
    'grpc.max_send_message_length': settings.maxMessageBytes,
    'grpc.initial_reconnect_backoff_ms': settings.reconnectBackoffInitialMs,
    'grpc.max_reconnect_backoff_ms': settings.reconnectBackoffMaxMs,
    'grpc.use_local_subchannel_pool': 1,
    'grpc.primary_user_agent': 'nodeagent-cri',
  };
  if (endpoint.kind === 'tcp') {
    options['grpc.keepalive_time_ms'] = 300_000;
    options['grpc.keepalive_timeout_ms'] = 20_000;
    options['grpc.keepalive_permit_without_calls'] = 0;
  }
  return options;
}
