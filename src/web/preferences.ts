// What the page remembers in this browser (localStorage): the theme and the font size.
// Never the token (that stays in the tab's sessionStorage, token.ts).
import type { ITheme } from '@xterm/xterm';

export type ThemeName = 'dark' | 'light';

export interface Appearance {
  theme: ThemeName;
  fontSize: number;
}

const KEY = 'pty-ws.appearance';
const DEFAULTS: Appearance = { theme: 'dark', fontSize: 14 };
export const FONT_SIZES = { min: 9, max: 28 };

export const THEMES: Record<ThemeName, ITheme> = {
  dark: { background: '#101418', foreground: '#d8dee9', cursor: '#f0c674', selectionBackground: '#33475b' },
  light: { background: '#fbfbf8', foreground: '#1f2328', cursor: '#b35900', selectionBackground: '#b6d3f2', black: '#1f2328', white: '#6e7781', brightWhite: '#8c959f', yellow: '#9a6700', brightYellow: '#7d4e00' },
};

export class Preferences {
  constructor(private readonly storage: Storage | null) {}

  load(): Appearance {
    try {
      const raw = JSON.parse(this.storage?.getItem(KEY) ?? 'null') as Partial<Appearance> | null;
      const theme = raw?.theme === 'light' || raw?.theme === 'dark' ? raw.theme : DEFAULTS.theme;
      const size = Number(raw?.fontSize);
      const fontSize = Number.isInteger(size) && size >= FONT_SIZES.min && size <= FONT_SIZES.max ? size : DEFAULTS.fontSize;
      return { theme, fontSize };
    } catch {
      return { ...DEFAULTS };
    }
  }

  save(a: Appearance): void {
    try {
      this.storage?.setItem(KEY, JSON.stringify(a));
    } catch {
      // Storage full or refused (private mode): the choice lasts for this page only.
    }
  }
}
