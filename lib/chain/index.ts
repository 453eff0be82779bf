/**
 * `acp-wire/chain`: proxy chains: the `proxy/successor` envelope, forwarding, `ProxyComponent`,
 * the `Conductor`, chain components. The same classes and functions as the root `acp-wire` exports
 * under the same names; importing this entry loads only these modules and what they use.
 *
 * @packageDocumentation
 */
export { innermostMessage, successorTarget, unwrapSuccessor, wrapSuccessor } from './successor';
export type { MessageTarget, SuccessorEnvelope } from './successor';
export { isCancelNotification, sendProxiedMessageTo } from './forwarding';
export { ProxyComponent } from './proxy';
export type { SuccessorRequestHandler } from './proxy';
export { COMPONENT_NOT_STARTED_REASON, Conductor } from './conductor';
export type { ConductorTraceOptions } from './conductor-trace';
export type { ConductorOptions, ConductorOutcome } from './conductor';
export { ComponentConnectionError } from './url-components';
export type { ChainComponent, ComponentRole, ComponentSource } from './chain-component';
export { CommandLineError, splitCommandLine } from './command-line';
