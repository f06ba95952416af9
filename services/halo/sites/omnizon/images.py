"""Product pictures drawn as small SVGs, one drawing per product kind in the product's colour.

The policy sees pixels, so a results page needs recognisable pictures (a pot looks like a pot),
and the replica has to run offline: no photos to download, nothing to license.
"""

from __future__ import annotations

from string import Template

from halo.sites.omnizon.catalog import Product


def _shade(hex_color: str, factor: float) -> str:
    """factor < 1 darkens, > 1 lightens (towards white)."""
    h = hex_color.lstrip("#")
    if len(h) == 3:
        h = "".join(ch * 2 for ch in h)
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    if factor <= 1:
        r, g, b = (int(v * factor) for v in (r, g, b))
    else:
        t = min(factor - 1, 1)
        r, g, b = (int(v + (255 - v) * t) for v in (r, g, b))
    return f"#{r:02x}{g:02x}{b:02x}"


# 200x200 drawings; $c = product colour, $d = darker, $l = lighter, $o = outline grey.
_DRAWINGS: dict[str, str] = {
    "headphones": """<path d="M45 120 V95 a55 55 0 0 1 110 0 V120" fill="none" stroke="$c" stroke-width="12"/>
        <rect x="30" y="110" width="36" height="58" rx="14" fill="$c"/><rect x="134" y="110" width="36" height="58" rx="14" fill="$c"/>
        <rect x="40" y="118" width="16" height="42" rx="7" fill="$l"/><rect x="144" y="118" width="16" height="42" rx="7" fill="$l"/>""",
    "earbuds": """<rect x="50" y="110" width="100" height="60" rx="28" fill="$c" stroke="$o" stroke-width="3"/>
        <line x1="52" y1="132" x2="148" y2="132" stroke="$o" stroke-width="2"/>
        <circle cx="78" cy="70" r="18" fill="$c" stroke="$o" stroke-width="3"/><rect x="72" y="78" width="12" height="34" rx="6" fill="$c" stroke="$o" stroke-width="3"/>
        <circle cx="122" cy="70" r="18" fill="$c" stroke="$o" stroke-width="3"/><rect x="116" y="78" width="12" height="34" rx="6" fill="$c" stroke="$o" stroke-width="3"/>""",
    "speaker": """<rect x="30" y="62" width="140" height="80" rx="36" fill="$c"/>
        <rect x="44" y="74" width="112" height="56" rx="26" fill="$d"/>
        <circle cx="100" cy="102" r="16" fill="$l"/><rect x="92" y="138" width="16" height="10" fill="$d"/>""",
    "phone": """<rect x="62" y="22" width="76" height="156" rx="14" fill="$c"/><rect x="68" y="34" width="64" height="132" rx="6" fill="#1e3a8a"/>
        <rect x="68" y="34" width="64" height="132" rx="6" fill="url(#scr)"/><circle cx="100" cy="28" r="3" fill="#000"/>""",
    "monitor": """<rect x="22" y="38" width="156" height="96" rx="6" fill="$c"/><rect x="30" y="46" width="140" height="80" fill="#2563eb"/>
        <rect x="30" y="46" width="140" height="80" fill="url(#scr)"/><rect x="92" y="134" width="16" height="22" fill="$d"/><rect x="66" y="156" width="68" height="8" rx="3" fill="$d"/>""",
    "tv": """<rect x="16" y="42" width="168" height="100" rx="4" fill="$c"/><rect x="22" y="48" width="156" height="88" fill="#0ea5e9"/>
        <rect x="22" y="48" width="156" height="88" fill="url(#scr)"/><rect x="40" y="142" width="8" height="18" fill="$c"/><rect x="152" y="142" width="8" height="18" fill="$c"/>""",
    "laptop": """<rect x="40" y="46" width="120" height="80" rx="6" fill="$c"/><rect x="47" y="53" width="106" height="66" fill="#3b82f6"/>
        <rect x="47" y="53" width="106" height="66" fill="url(#scr)"/><path d="M24 130 H176 L166 146 H34 Z" fill="$d"/>""",
    "keyboard": """<rect x="14" y="72" width="150" height="58" rx="6" fill="$c"/>
        <g fill="$l"><rect x="22" y="80" width="134" height="10" rx="2" opacity=".5"/><rect x="22" y="95" width="134" height="10" rx="2" opacity=".5"/><rect x="22" y="110" width="134" height="10" rx="2" opacity=".5"/></g>
        <ellipse cx="180" cy="104" rx="12" ry="18" fill="$c"/>""",
    "battery": """<rect x="56" y="30" width="88" height="140" rx="14" fill="$c"/><rect x="66" y="44" width="68" height="24" rx="4" fill="$l" opacity=".4"/>
        <circle cx="90" cy="150" r="3" fill="#22c55e"/><circle cx="100" cy="150" r="3" fill="#22c55e"/><circle cx="110" cy="150" r="3" fill="#22c55e"/>""",
    "card": """<path d="M64 34 H124 L140 50 V166 H64 Z" fill="$c"/><rect x="72" y="60" width="60" height="60" rx="4" fill="#fff"/>
        <text x="102" y="96" font-size="20" font-family="Arial" font-weight="bold" text-anchor="middle" fill="$c">128</text>""",
    "controller": """<path d="M50 70 H150 C175 70 185 130 178 150 C172 168 152 165 140 145 L130 128 H70 L60 145 C48 165 28 168 22 150 C15 130 25 70 50 70 Z" fill="$c"/>
        <circle cx="62" cy="98" r="12" fill="$d"/><circle cx="138" cy="98" r="12" fill="$d"/>
        <circle cx="80" cy="120" r="9" fill="$d"/><circle cx="120" cy="120" r="9" fill="$d"/><rect x="90" y="80" width="20" height="12" rx="3" fill="$l"/>""",
    "dock": """<rect x="30" y="130" width="140" height="30" rx="8" fill="$c"/><rect x="44" y="60" width="46" height="70" rx="16" fill="#e5e7eb" stroke="$o" stroke-width="2"/>
        <rect x="110" y="60" width="46" height="70" rx="16" fill="#e5e7eb" stroke="$o" stroke-width="2"/><circle cx="67" cy="145" r="4" fill="#22c55e"/><circle cx="133" cy="145" r="4" fill="#ef4444"/>""",
    "mouse": """<path d="M100 30 C140 30 150 70 150 110 C150 150 130 172 100 172 C70 172 50 150 50 110 C50 70 60 30 100 30 Z" fill="$c"/>
        <line x1="100" y1="32" x2="100" y2="84" stroke="$l" stroke-width="3"/><rect x="95" y="50" width="10" height="20" rx="5" fill="$l"/>""",
    "console": """<path d="M70 20 H112 L118 180 H64 Z" fill="$c" stroke="$o" stroke-width="3"/><path d="M112 20 H134 C130 80 130 120 136 180 H118 Z" fill="#111"/>
        <path d="M70 20 H56 C60 80 60 120 54 180 H64 Z" fill="$c" stroke="$o" stroke-width="3"/>""",
    "handheld": """<rect x="14" y="62" width="172" height="80" rx="30" fill="$c" stroke="$o" stroke-width="3"/><rect x="50" y="70" width="100" height="64" rx="4" fill="#111"/>
        <rect x="54" y="74" width="92" height="56" fill="url(#scr)"/><circle cx="32" cy="92" r="8" fill="#3b82f6"/><circle cx="168" cy="112" r="8" fill="#ef4444"/>""",
    "vr": """<rect x="30" y="68" width="140" height="70" rx="26" fill="$c" stroke="$o" stroke-width="3"/>
        <rect x="44" y="82" width="112" height="42" rx="18" fill="#111"/><path d="M30 100 C10 100 10 70 40 56 H160 C190 70 190 100 170 100" fill="none" stroke="$o" stroke-width="6"/>""",
    "game": """<rect x="50" y="24" width="100" height="152" rx="6" fill="#1e40af"/><rect x="56" y="50" width="88" height="116" fill="$c"/>
        <text x="100" y="42" font-size="14" font-family="Arial" font-weight="bold" text-anchor="middle" fill="#fff">PS5</text>
        <circle cx="100" cy="104" r="26" fill="#111" opacity=".6"/>""",
    "pot": """<rect x="36" y="66" width="128" height="96" rx="10" fill="$c"/><rect x="36" y="66" width="128" height="14" fill="$d"/>
        <rect x="16" y="86" width="24" height="10" rx="4" fill="$d"/><rect x="160" y="86" width="24" height="10" rx="4" fill="$d"/>
        <ellipse cx="100" cy="64" rx="68" ry="10" fill="$l"/><rect x="90" y="44" width="20" height="14" rx="4" fill="$d"/>
        <rect x="48" y="92" width="16" height="58" fill="#fff" opacity=".35"/>""",
    "dutchoven": """<path d="M34 84 H166 V140 C166 158 150 166 134 166 H66 C50 166 34 158 34 140 Z" fill="$c"/>
        <path d="M30 82 C30 50 170 50 170 82 Z" fill="$d"/><rect x="88" y="46" width="24" height="12" rx="6" fill="#d4d4d8"/>
        <rect x="14" y="94" width="22" height="14" rx="7" fill="$c"/><rect x="164" y="94" width="22" height="14" rx="7" fill="$c"/>""",
    "potholder": """<rect x="26" y="50" width="70" height="90" rx="16" fill="$c" transform="rotate(-10 61 95)"/>
        <rect x="104" y="60" width="70" height="90" rx="16" fill="$c" transform="rotate(8 139 105)"/>
        <g stroke="$l" stroke-width="3" opacity=".6"><line x1="40" y1="70" x2="84" y2="62"/><line x1="42" y1="90" x2="86" y2="82"/><line x1="116" y1="80" x2="160" y2="86"/><line x1="114" y1="100" x2="158" y2="106"/></g>""",
    "pan": """<ellipse cx="80" cy="110" rx="62" ry="40" fill="$c"/><ellipse cx="80" cy="104" rx="52" ry="30" fill="$d"/>
        <rect x="136" y="100" width="56" height="14" rx="7" fill="#44403c" transform="rotate(-12 136 107)"/>""",
    "kettle": """<path d="M56 80 C56 60 144 60 144 80 L156 160 H44 Z" fill="$c" stroke="$o" stroke-width="2"/>
        <path d="M144 100 L184 70" stroke="$c" stroke-width="12" stroke-linecap="round"/><path d="M66 70 C70 30 130 30 134 70" fill="none" stroke="#111" stroke-width="8"/>""",
    "apron": """<path d="M70 28 H130 V70 C150 70 160 78 162 96 L150 176 H50 L38 96 C40 78 50 70 70 70 Z" fill="$c"/>
        <path d="M70 28 C60 10 140 10 130 28" fill="none" stroke="#b45309" stroke-width="6"/>
        <rect x="66" y="118" width="30" height="28" rx="3" fill="$d"/><rect x="104" y="118" width="30" height="28" rx="3" fill="$d"/>
        <path d="M40 90 L10 110 M160 90 L190 110" stroke="#b45309" stroke-width="6"/>""",
    "flatware": """<g fill="$c" stroke="$o" stroke-width="2"><rect x="40" y="30" width="6" height="50"/><rect x="52" y="30" width="6" height="50"/><rect x="64" y="30" width="6" height="50"/>
        <rect x="38" y="78" width="34" height="12" rx="6"/><rect x="49" y="88" width="12" height="84" rx="5"/>
        <path d="M96 28 C112 28 112 60 102 86 V172 H92 V86 C82 60 82 28 96 28 Z"/>
        <ellipse cx="146" cy="58" rx="20" ry="30"/><rect x="140" y="84" width="12" height="88" rx="5"/></g>""",
    "knives": """<rect x="30" y="140" width="140" height="30" rx="6" fill="#78350f"/>
        <g fill="$c"><path d="M44 138 L54 40 L64 138 Z"/><path d="M74 138 L84 44 L94 138 Z"/><path d="M104 138 L114 40 L124 138 Z"/><path d="M134 138 L144 44 L154 138 Z"/></g>""",
    "plates": """<ellipse cx="100" cy="120" rx="80" ry="40" fill="$c" stroke="$o" stroke-width="3"/><ellipse cx="100" cy="116" rx="52" ry="24" fill="#fff" stroke="#e5e7eb" stroke-width="3"/>
        <ellipse cx="100" cy="82" rx="60" ry="28" fill="$c" stroke="$o" stroke-width="3"/>""",
    "utensils": """<rect x="70" y="110" width="60" height="66" rx="8" fill="#a16207"/>
        <g stroke-width="8" stroke-linecap="round"><line x1="80" y1="112" x2="60" y2="40" stroke="#a16207"/><line x1="100" y1="112" x2="100" y2="36" stroke="#a16207"/><line x1="120" y1="112" x2="140" y2="40" stroke="#a16207"/></g>
        <rect x="48" y="22" width="24" height="30" rx="6" fill="$c"/><ellipse cx="100" cy="28" rx="13" ry="16" fill="$c"/><rect x="128" y="22" width="24" height="30" rx="4" fill="$c"/>""",
    "containers": """<rect x="24" y="100" width="80" height="56" rx="8" fill="#dbeafe" stroke="$o" stroke-width="3"/><rect x="20" y="90" width="88" height="14" rx="5" fill="$c"/>
        <rect x="108" y="70" width="70" height="86" rx="8" fill="#dbeafe" stroke="$o" stroke-width="3"/><rect x="104" y="60" width="78" height="14" rx="5" fill="$c"/>""",
    "espresso": """<rect x="40" y="30" width="120" height="140" rx="8" fill="$c"/><rect x="52" y="44" width="96" height="24" rx="4" fill="$d"/>
        <rect x="70" y="76" width="60" height="12" rx="4" fill="#111"/><rect x="80" y="120" width="40" height="36" rx="4" fill="#fff"/><rect x="40" y="160" width="120" height="10" fill="$d"/>""",
    "coffee": """<path d="M60 30 H140 V170 H60 Z" fill="$c"/><rect x="70" y="44" width="60" height="20" rx="4" fill="$l" opacity=".3"/>
        <rect x="82" y="112" width="36" height="44" rx="4" fill="#fff"/><rect x="60" y="160" width="80" height="10" fill="#111"/>""",
    "blender": """<path d="M62 30 H138 L126 120 H74 Z" fill="#e0f2fe" stroke="$o" stroke-width="3"/><rect x="58" y="22" width="84" height="12" rx="4" fill="#111"/>
        <rect x="66" y="120" width="68" height="50" rx="8" fill="$c"/><circle cx="100" cy="146" r="8" fill="$l"/>""",
    "airfryer": """<rect x="40" y="30" width="120" height="140" rx="26" fill="$c"/><rect x="54" y="100" width="92" height="56" rx="10" fill="$d"/>
        <rect x="80" y="122" width="40" height="10" rx="5" fill="#a1a1aa"/><circle cx="100" cy="62" r="14" fill="#111" stroke="#f97316" stroke-width="3"/>""",
    "toaster": """<rect x="30" y="70" width="140" height="90" rx="22" fill="$c" stroke="$o" stroke-width="3"/><rect x="56" y="64" width="36" height="10" rx="4" fill="#111"/>
        <rect x="108" y="64" width="36" height="10" rx="4" fill="#111"/><rect x="162" y="100" width="12" height="20" rx="3" fill="#111"/>""",
    "ballpack": """<circle cx="62" cy="74" r="36" fill="#f97316"/><path d="M26 74 H98 M62 38 V110" stroke="#111" stroke-width="3"/>
        <circle cx="140" cy="74" r="34" fill="#fafafa" stroke="#111" stroke-width="3"/><polygon points="140,60 152,70 148,84 132,84 128,70" fill="#111"/>
        <ellipse cx="64" cy="146" rx="42" ry="26" fill="#7c2d12"/><path d="M46 146 H82" stroke="#fff" stroke-width="3"/>
        <circle cx="140" cy="146" r="32" fill="#fde047" stroke="#2563eb" stroke-width="3"/><path d="M110 140 C130 130 150 130 170 140" stroke="#2563eb" stroke-width="3" fill="none"/>""",
    "basketball": """<circle cx="100" cy="100" r="70" fill="$c"/><g stroke="#111" stroke-width="4" fill="none"><path d="M30 100 H170 M100 30 V170"/>
        <path d="M52 50 C80 80 80 120 52 150"/><path d="M148 50 C120 80 120 120 148 150"/></g>""",
    "football": """<ellipse cx="100" cy="100" rx="80" ry="48" fill="$c" transform="rotate(-25 100 100)"/>
        <path d="M70 112 L130 84" stroke="#fff" stroke-width="4"/><g stroke="#fff" stroke-width="3"><path d="M84 96 L90 110"/><path d="M96 90 L102 104"/><path d="M108 85 L114 99"/></g>""",
    "soccer": """<circle cx="100" cy="100" r="70" fill="$c" stroke="#111" stroke-width="3"/><polygon points="100,74 124,92 115,120 85,120 76,92" fill="#111"/>
        <g stroke="#111" stroke-width="3"><path d="M100 74 V36 M124 92 L160 80 M115 120 L136 152 M85 120 L64 152 M76 92 L40 80"/></g>""",
    "pump": """<rect x="80" y="40" width="40" height="120" rx="8" fill="$c"/><rect x="60" y="30" width="80" height="16" rx="8" fill="#111"/>
        <path d="M120 140 C160 140 160 170 176 170" stroke="#111" stroke-width="5" fill="none"/>""",
    "paddle": """<ellipse cx="76" cy="80" rx="44" ry="52" fill="$c"/><rect x="68" y="128" width="16" height="50" rx="5" fill="#111"/>
        <ellipse cx="132" cy="92" rx="44" ry="52" fill="$d"/><rect x="124" y="140" width="16" height="46" rx="5" fill="#111"/>
        <circle cx="164" cy="164" r="14" fill="#facc15"/>""",
    "yogamat": """<rect x="30" y="40" width="120" height="110" rx="4" fill="$c"/><ellipse cx="150" cy="95" rx="26" ry="55" fill="$d"/>
        <ellipse cx="150" cy="95" rx="14" ry="36" fill="$c"/>""",
    "dumbbell": """<rect x="60" y="92" width="80" height="16" rx="6" fill="#52525b"/>
        <polygon points="20,70 56,70 66,100 56,130 20,130 10,100" fill="$c"/><polygon points="144,70 180,70 190,100 180,130 144,130 134,100" fill="$c"/>""",
    "bottle": """<rect x="66" y="50" width="68" height="130" rx="22" fill="$c"/><rect x="78" y="26" width="44" height="30" rx="8" fill="#111"/>
        <rect x="76" y="70" width="12" height="90" rx="6" fill="#fff" opacity=".3"/>""",
    "tent": """<path d="M100 34 L184 160 H16 Z" fill="$c"/><path d="M100 34 L130 160 H70 Z" fill="$d"/><path d="M100 90 L116 160 H84 Z" fill="#111"/>""",
    "desk": """<rect x="14" y="70" width="172" height="14" rx="2" fill="$c"/><rect x="22" y="84" width="8" height="86" fill="#111"/>
        <rect x="170" y="84" width="8" height="86" fill="#111"/><rect x="22" y="160" width="156" height="4" fill="#111"/>
        <rect x="36" y="94" width="26" height="40" rx="4" fill="#6b7280"/>""",
    "standingdesk": """<rect x="14" y="56" width="172" height="14" rx="2" fill="$c"/><rect x="40" y="70" width="12" height="96" fill="#374151"/>
        <rect x="148" y="70" width="12" height="96" fill="#374151"/><rect x="24" y="164" width="44" height="8" fill="#111"/><rect x="132" y="164" width="44" height="8" fill="#111"/>""",
    "chair": """<rect x="58" y="20" width="84" height="84" rx="18" fill="$c"/><rect x="50" y="104" width="100" height="20" rx="8" fill="$d"/>
        <rect x="96" y="124" width="8" height="30" fill="#52525b"/><path d="M60 168 L100 152 L140 168 M100 152 V172" stroke="#52525b" stroke-width="6"/>
        <rect x="38" y="84" width="12" height="30" rx="4" fill="#52525b"/><rect x="150" y="84" width="12" height="30" rx="4" fill="#52525b"/>""",
    "shelf": """<rect x="50" y="16" width="100" height="170" fill="none" stroke="$c" stroke-width="8"/>
        <g fill="$c"><rect x="50" y="50" width="100" height="6"/><rect x="50" y="84" width="100" height="6"/><rect x="50" y="118" width="100" height="6"/><rect x="50" y="152" width="100" height="6"/></g>
        <rect x="60" y="28" width="10" height="22" fill="#2563eb"/><rect x="72" y="32" width="10" height="18" fill="#dc2626"/><rect x="110" y="96" width="24" height="22" fill="#16a34a"/>""",
    "bed": """<rect x="18" y="50" width="164" height="70" rx="8" fill="$c"/><rect x="18" y="110" width="164" height="36" fill="#f5f5f4" stroke="#d6d3d1" stroke-width="3"/>
        <rect x="14" y="142" width="172" height="14" rx="3" fill="$c"/><rect x="22" y="156" width="10" height="18" fill="$d"/><rect x="168" y="156" width="10" height="18" fill="$d"/>
        <rect x="40" y="96" width="50" height="18" rx="8" fill="#fff" stroke="#d6d3d1" stroke-width="2"/><rect x="110" y="96" width="50" height="18" rx="8" fill="#fff" stroke="#d6d3d1" stroke-width="2"/>""",
    "contourpillow": """<path d="M20 120 C20 80 50 70 70 90 C90 110 110 110 130 90 C150 70 180 80 180 120 V150 H20 Z" fill="$c" stroke="#a8a29e" stroke-width="3"/>
        <path d="M30 140 H170" stroke="#d6d3d1" stroke-width="3"/>""",
    "neckpillow": """<path d="M100 30 C160 30 180 90 160 140 C150 165 125 165 128 140 C132 110 130 80 100 80 C70 80 68 110 72 140 C75 165 50 165 40 140 C20 90 40 30 100 30 Z" fill="$c"/>
        <path d="M70 60 C90 50 110 50 130 60" stroke="$l" stroke-width="4" fill="none"/>""",
    "pillow": """<path d="M24 60 C60 44 140 44 176 60 C184 90 184 120 176 150 C140 166 60 166 24 150 C16 120 16 90 24 60 Z" fill="$c" stroke="#d4d4d8" stroke-width="3"/>
        <path d="M34 82 C60 74 140 74 166 82" stroke="#e5e7eb" stroke-width="3" fill="none"/>""",
    "lumbarpillow": """<path d="M30 70 C70 54 130 54 170 70 V140 C130 124 70 124 30 140 Z" fill="$c"/><rect x="14" y="92" width="172" height="10" fill="#52525b"/>""",
    "sheets": """<rect x="34" y="60" width="132" height="36" rx="6" fill="$c"/><rect x="34" y="96" width="132" height="36" rx="6" fill="$d"/>
        <rect x="34" y="132" width="132" height="36" rx="6" fill="$c"/><rect x="44" y="30" width="112" height="30" rx="10" fill="$l"/>""",
    "blanket": """<path d="M30 40 H170 V150 C150 170 120 150 100 168 C80 150 50 170 30 150 Z" fill="$c"/>
        <g stroke="$l" stroke-width="2"><path d="M30 70 H170 M30 100 H170 M30 130 H170 M70 40 V160 M130 40 V160"/></g>""",
    "watch": """<rect x="80" y="16" width="40" height="50" rx="6" fill="$d"/><rect x="80" y="134" width="40" height="50" rx="6" fill="$d"/>
        <circle cx="100" cy="100" r="44" fill="$c"/><circle cx="100" cy="100" r="34" fill="#fafafa"/>
        <path d="M100 100 V76 M100 100 L118 108" stroke="#111" stroke-width="4" stroke-linecap="round"/>""",
    "backpack": """<rect x="46" y="44" width="108" height="136" rx="34" fill="$c"/><rect x="64" y="110" width="72" height="52" rx="12" fill="$d"/>
        <path d="M76 44 C76 20 124 20 124 44" fill="none" stroke="$d" stroke-width="8"/>""",
    "sunglasses": """<path d="M20 80 H90 L84 120 C80 134 40 134 30 120 Z" fill="#14532d" stroke="$c" stroke-width="6"/>
        <path d="M110 80 H180 L170 120 C160 134 120 134 116 120 Z" fill="#14532d" stroke="$c" stroke-width="6"/><path d="M90 86 H110" stroke="$c" stroke-width="6"/>""",
    "hoodie": """<path d="M70 30 C80 20 120 20 130 30 L176 60 L164 110 L146 100 V176 H54 V100 L36 110 L24 60 Z" fill="$c"/>
        <path d="M78 30 C84 60 116 60 122 30" fill="$d"/><rect x="74" y="128" width="52" height="24" rx="6" fill="$d"/>""",
}

_DEFS = """<defs><linearGradient id="scr" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#60a5fa" stop-opacity=".9"/>
<stop offset="1" stop-color="#7c3aed" stop-opacity=".9"/></linearGradient></defs>"""


def product_svg(p: Product) -> str:
    drawing = _DRAWINGS.get(p.kind)
    if drawing is None:  # an unknown kind still gets a neutral box, never a broken image
        drawing = """<rect x="40" y="50" width="120" height="100" rx="6" fill="$c"/><path d="M40 80 H160" stroke="$d" stroke-width="6"/>"""
    body = Template(drawing).substitute(c=p.color, d=_shade(p.color, 0.7), l=_shade(p.color, 1.5), o="#71717a")
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 200" width="200" height="200">'
        f'{_DEFS}{body}</svg>'
    )
