import type { TaskTemplate } from "../types";

export const MUSIC_TEMPLATES: TaskTemplate[] = [];
