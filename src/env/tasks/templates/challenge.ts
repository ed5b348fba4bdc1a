import type { TaskTemplate } from "../types";

export const CHALLENGE_TEMPLATES: TaskTemplate[] = [];
