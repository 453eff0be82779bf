/**
 * Two `serve` instances (`a` and `b`) behind one HAProxy, and the clients a spec opens through it;
 * all of it stopped after each test (clients closed, HAProxy stopped, instances drained or killed,
 * agents left behind killed).
 */
import { stopAll } from '../helpers/processes';
import { startBalancer, startServe, stopInstances, type Balancer, type Serve } from './balancer';
import { closeClients, type TurnClient } from './clients';

/** Two instances behind a balancer. */
export interface Cluster {
  readonly a: Serve;
  readonly b: Serve;
  readonly balancer: Balancer;
  /** Clients to close after the test: push every client the test opens. */
  readonly clients: TurnClient[];
}

/** How to start a {@link Cluster}. */
export interface ClusterOptions {
  /** Options of instance `a`'s `serve`. */
  a?: readonly string[];
  /** Options of instance `b`'s `serve`. */
  b?: readonly string[];
  /** The health check interval (HAProxy's `inter`); default 200ms. */
  checkInterval?: string;
}

/** Registers an `afterEach` that stops the cluster; returns its starter. */
export function useCluster(): (options?: ClusterOptions) => Promise<Cluster> {
  let cluster: Partial<Cluster> & { clients: TurnClient[]; instances: Serve[] } = { clients: [], instances: [] };
  afterEach(async function () {
    this.timeout(60_000);
    await closeClients(cluster.clients);
    await cluster.balancer?.stop();
    await stopInstances(cluster.instances);
    await stopAll();
    cluster = { clients: [], instances: [] };
  });
  return async (options = {}) => {
    const instances = await Promise.all([startServe(options.a), startServe(options.b)]);
    cluster.instances = instances;
    const [a, b] = instances as [Serve, Serve];
    const balancer = await startBalancer({ a: a.port, b: b.port }, options.checkInterval);
    cluster = { ...cluster, a, b, balancer };
    return { a, b, balancer, clients: cluster.clients };
  };
}
