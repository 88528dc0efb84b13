/**
 * The exit breakers' verdicts shared by a fleet (exitBreaker.ts): a worker that opens an exit, or
 * closes it again after a trial, publishes its verdict on a Redis channel, which every other worker
 * adopts within milliseconds; the verdicts are also kept in a hash under the same key, which a worker
 * reads as it joins. So a broken proxy is found by one worker and rested by all: the others send it
 * nothing until its time is up, then one trial each.
 *
 * The times are epoch milliseconds: the workers' clocks are taken to agree (NTP's milliseconds are
 * enough against breaker times of seconds).
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../frontier/redis/connection.js';
import type { ExitBreaker, ExitVerdict } from './exitBreaker.js';

export interface RedisExitVerdictsOptions {
    redis: RedisClient;
    /** The hash and channel of the site's verdicts, `{<prefix>:<site>}:exits`. */
    key: string;
}

interface Message {
    from: string;
    exit: string;
    verdict: ExitVerdict;
}

export class RedisExitVerdicts {
    private readonly redis: RedisClient;
    private readonly key: string;
    private readonly self = randomUUID();
    private subscriber: RedisClient | undefined;

    constructor(options: RedisExitVerdictsOptions) {
        this.redis = options.redis;
        this.key = options.key;
    }

    /** Tells the fleet this worker's verdict on `exit`. */
    readonly publish = (exit: string, verdict: ExitVerdict): void => {
        const message: Message = { from: this.self, exit, verdict };
        void this.redis
            .multi()
            .hset(this.key, exit, JSON.stringify(verdict))
            .publish(this.key, JSON.stringify(message))
            .exec()
            .catch(() => undefined); // a verdict not shared costs the others a request each, not the run
    };

    /** Has `breaker` adopt the fleet's verdicts: those standing now, then each as it is published. */
    async follow(breaker: ExitBreaker): Promise<void> {
        const subscriber = this.redis.duplicate();
        this.subscriber = subscriber;
        subscriber.on('message', (_channel: string, text: string) => {
            const message = JSON.parse(text) as Message;
            if (message.from !== this.self) breaker.adopt(message.exit, message.verdict);
        });
        await subscriber.subscribe(this.key);
        const standing = await this.redis.hgetall(this.key);
        for (const [exit, verdict] of Object.entries(standing)) breaker.adopt(exit, JSON.parse(verdict) as ExitVerdict);
    }

    /** The exits the fleet holds out now, with when each is due back (`npm run status`). */
    async resting(now = Date.now()): Promise<{ exit: string; until: number }[]> {
        const standing = await this.redis.hgetall(this.key);
        return Object.entries(standing)
            .map(([exit, verdict]) => ({ exit, until: (JSON.parse(verdict) as ExitVerdict).openUntil }))
            .filter(({ until }) => until > now)
            .sort((a, b) => a.until - b.until);
    }

    async close(): Promise<void> {
        await this.subscriber?.quit().catch(() => this.subscriber?.disconnect());
    }
}
