/**
 * A Chromium driven over its DevTools protocol (CDP) on a pipe (`--remote-debugging-pipe`: messages
 * as JSON, each ended by a NUL byte, the browser reading fd 3 and writing fd 4). The chrome wire
 * profile (chromeWire.ts) sends every request of a crawl through it, so this is kept to what that
 * needs: commands, with flat sessions for targets, and their events. Playwright's CDP sessions do
 * as much, but cost ~5 ms of this thread's CPU per request against ~1 ms here, on top of the
 * instrumentation Playwright puts on every page it knows.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { ProtocolMapping } from 'devtools-protocol/types/protocol-mapping.js';

type Command = keyof ProtocolMapping.Commands;
type Event = keyof ProtocolMapping.Events;
type Params<C extends Command> = ProtocolMapping.Commands[C]['paramsType'][0];
type Result<C extends Command> = ProtocolMapping.Commands[C]['returnType'];
type EventParams<E extends Event> = ProtocolMapping.Events[E][0];

/** The error every command waiting or sent later fails with once the browser is gone. */
export class BrowserClosedError extends Error {
    override readonly name = 'BrowserClosedError';
    readonly code = 'ERR_BROWSER_CLOSED';
}

/** How long a browser asked to close may take before it is killed. */
const CLOSE_GRACE_MS = 5_000;

interface Waiting {
    resolve: (result: never) => void;
    reject: (error: Error) => void;
    method: string;
}

export class DevtoolsPipe {
    private nextId = 1;
    private readonly waiting = new Map<number, Waiting>();
    private readonly listeners = new Map<string, Set<(params: never) => void>>();
    private unread = '';
    private closedBecause?: Error;

    private constructor(
        private readonly child: ChildProcess,
        private readonly userDataDir: string,
    ) {
        const commands = child.stdio[3] as Writable;
        const messages = child.stdio[4] as Readable;
        this.write = (line) => commands.write(`${line}\0`);
        messages.setEncoding('utf8');
        messages.on('data', (chunk: string) => this.receive(chunk));
        commands.on('error', () => undefined);
        child.once('exit', (code, signal) =>
            this.shutDown(new BrowserClosedError(`Chromium exited (${signal ?? `code ${code}`})`)),
        );
    }

    private readonly write: (line: string) => void;

    /** Starts Chromium with `args` and a profile of its own, removed when it closes. */
    static async launch(executablePath: string, args: readonly string[]): Promise<DevtoolsPipe> {
        const userDataDir = await mkdtemp(join(tmpdir(), 'dragnet-chrome-wire-'));
        const child = spawn(
            executablePath,
            [...args, '--remote-debugging-pipe', `--user-data-dir=${userDataDir}`, 'about:blank'],
            { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
        );
        let stderr = '';
        child.stderr?.setEncoding('utf8').on('data', (text: string) => {
            if (stderr.length < 4096) stderr += text;
        });
        const pipe = new DevtoolsPipe(child, userDataDir);
        const started = await new Promise<Error | undefined>((resolve) => {
            child.once('error', resolve);
            pipe.send('Browser.getVersion').then(() => resolve(undefined), resolve);
        });
        if (started) {
            await pipe.close();
            const why = stderr.trim().split('\n')[0] || started.message;
            throw Object.assign(new Error(`Chromium at ${executablePath} did not start: ${why}`), {
                code: 'ERR_BROWSER_LAUNCH',
            });
        }
        return pipe;
    }

    send<C extends Command>(method: C, params?: Params<C>, sessionId?: string): Promise<Result<C>> {
        if (this.closedBecause) return Promise.reject(this.closedBecause);
        const id = this.nextId++;
        return new Promise((resolve, reject) => {
            this.waiting.set(id, { resolve: resolve as (result: never) => void, reject, method });
            this.write(JSON.stringify({ id, method, params: params ?? {}, sessionId }));
        });
    }

    /** Calls `listener` with each `event` of the target session `sessionId` (or the browser's: undefined). */
    on<E extends Event>(sessionId: string | undefined, event: E, listener: (params: EventParams<E>) => void): void {
        const key = `${sessionId ?? ''}:${event}`;
        let set = this.listeners.get(key);
        if (!set) {
            set = new Set();
            this.listeners.set(key, set);
        }
        set.add(listener as (params: never) => void);
    }

    off<E extends Event>(sessionId: string | undefined, event: E, listener: (params: EventParams<E>) => void): void {
        const key = `${sessionId ?? ''}:${event}`;
        this.listeners.get(key)?.delete(listener as (params: never) => void);
        if (this.listeners.get(key)?.size === 0) this.listeners.delete(key);
    }

    get closed(): boolean {
        return this.closedBecause !== undefined;
    }

    /**
     * Ends the browser and removes its profile. Asked to close, Chromium ends its helper processes
     * before it exits (killed at once, they would still write to the profile as it is removed); one
     * that does not exit within a few seconds is killed.
     */
    async close(): Promise<void> {
        const running = this.child.exitCode === null && this.child.signalCode === null;
        if (running) {
            const exited = new Promise((resolve) => this.child.once('exit', resolve));
            if (!this.closedBecause) this.write(JSON.stringify({ id: this.nextId++, method: 'Browser.close' }));
            const killer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_GRACE_MS);
            await exited;
            clearTimeout(killer);
        }
        this.shutDown(new BrowserClosedError('the browser was closed'));
        await rm(this.userDataDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    }

    private receive(chunk: string): void {
        this.unread += chunk;
        for (let end = this.unread.indexOf('\0'); end !== -1; end = this.unread.indexOf('\0')) {
            const message = JSON.parse(this.unread.slice(0, end)) as {
                id?: number;
                result?: never;
                error?: { message: string };
                method?: string;
                params?: never;
                sessionId?: string;
            };
            this.unread = this.unread.slice(end + 1);
            if (message.id !== undefined) {
                const waiting = this.waiting.get(message.id);
                this.waiting.delete(message.id);
                if (message.error) waiting?.reject(new Error(`${waiting.method}: ${message.error.message}`));
                else waiting?.resolve(message.result as never);
            } else if (message.method) {
                const set = this.listeners.get(`${message.sessionId ?? ''}:${message.method}`);
                for (const listener of set ?? []) listener(message.params as never);
            }
        }
    }

    private shutDown(reason: Error): void {
        if (this.closedBecause) return;
        this.closedBecause = reason;
        for (const waiting of this.waiting.values()) waiting.reject(reason);
        this.waiting.clear();
        this.listeners.clear();
    }
}
