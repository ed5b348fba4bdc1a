import type { TaskTemplate } from "../types";

export const MONEY_TEMPLATES: TaskTemplate[] = [];
