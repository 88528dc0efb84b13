/**
 * The request budget (`--max-requests`): how many URLs a run admits to its frontier. A process
 * alone counts its own admissions (LocalRequestBudget); a fleet takes them from one count in Redis
 * (redis/redisRequestBudget.ts), so the budget is the fleet's: N URLs across every worker, not N
 * each.
 *
 * The frontier takes from the budget for the links the seen-set does not hold, before it queues
 * them, and gives back what another worker admitted first (the seen-set's add says which).
 */
export interface RequestBudget {
    /** Takes up to `wanted` admissions from what is left; resolves to how many it took. */
    take(wanted: number): Promise<number>;
    /** Gives back admissions taken for URLs that were not admitted after all. */
    giveBack(count: number): Promise<void>;
    /** Whether nothing was left when last looked at (the fleet's count, as of this worker's last take). */
    readonly spent: boolean;
}

/** No budget: every take is granted whole. */
export const UNLIMITED_BUDGET: RequestBudget = {
    take: async (wanted) => wanted,
    giveBack: async () => {},
    spent: false,
};

/** One process's budget of `limit` URLs, `used` of them admitted already (a resumed run's). */
export class LocalRequestBudget implements RequestBudget {
    constructor(
        private readonly limit: number,
        private used = 0,
    ) {}

    async take(wanted: number): Promise<number> {
        const taken = Math.max(0, Math.min(wanted, this.limit - this.used));
        this.used += taken;
        return taken;
    }

    async giveBack(count: number): Promise<void> {
        this.used -= count;
    }

    get spent(): boolean {
        return this.used >= this.limit;
    }
}
